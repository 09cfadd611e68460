# Depthwise Conv2d (groups = channels = 144), 3x3, padding 1, bias, then ReLU6: a MobileNetV2 block, fp32.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.dw = nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=channels)
        self.act = nn.ReLU6()

    def forward(self, x):
        return self.act(self.dw(x))


batch, channels, size = 32, 144, 56


def get_inputs():
    return [torch.randn(batch, channels, size, size)]


def get_init_inputs():
    return [channels]
