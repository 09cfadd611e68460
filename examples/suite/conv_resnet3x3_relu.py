# Conv2d 64 -> 64, 3x3, padding 1, bias, then ReLU: a ResNet stage-1 block on [32, 64, 56, 56], fp32.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


batch, channels, size = 32, 64, 56


def get_inputs():
    return [torch.randn(batch, channels, size, size)]


def get_init_inputs():
    return [channels]
