# Grouped Conv2d 256 -> 256, 3x3, padding 1, 32 groups (a ResNeXt block), bias, then ReLU, bf16, [16, 256, 28, 28].
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, groups):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=groups,
                              dtype=torch.bfloat16)

    def forward(self, x):
        return torch.relu(self.conv(x))


batch, channels, groups, size = 16, 256, 32, 28


def get_inputs():
    return [torch.randn(batch, channels, size, size, dtype=torch.bfloat16)]


def get_init_inputs():
    return [channels, groups]
