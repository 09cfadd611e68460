"""A convolution on a periodic domain: circular padding, 3x3 convolution, GELU, residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1, padding_mode="circular")

    def forward(self, x):
        return x + F.gelu(self.conv(x))


def get_inputs():
    return [torch.randn(16, 64, 128, 128)]


def get_init_inputs():
    return [64]
