# MaxPool2d(kernel 3, stride 2, padding 1) on a [32, 64, 112, 112] feature map (the ResNet stem pool).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(32, 64, 112, 112)]


def get_init_inputs():
    return []
