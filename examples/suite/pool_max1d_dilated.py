# MaxPool1d(kernel 4, stride 2, padding 2, dilation 3, ceil_mode) on [64, 128, 8192].
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size=4, stride=2, padding=2, dilation=3, ceil_mode=True)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(64, 128, 8192)]


def get_init_inputs():
    return []
