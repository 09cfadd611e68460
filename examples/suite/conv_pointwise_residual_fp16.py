# Pointwise Conv2d 256 -> 256 (1x1), bias, + residual input, then ReLU, fp16, [16, 256, 28, 28].
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=1, dtype=torch.float16)

    def forward(self, x):
        return torch.relu(self.conv(x) + x)


batch, channels, size = 16, 256, 28


def get_inputs():
    return [torch.randn(batch, channels, size, size, dtype=torch.float16)]


def get_init_inputs():
    return [channels]
