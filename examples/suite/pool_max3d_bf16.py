# MaxPool3d(kernel 3, stride 2, padding 1, dilation 2) on a bf16 [8, 32, 32, 64, 64] volume, then tanh.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size=3, stride=2, padding=1, dilation=2)

    def forward(self, x):
        return torch.tanh(self.pool(x))


def get_inputs():
    return [torch.randn(8, 32, 32, 64, 64, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
