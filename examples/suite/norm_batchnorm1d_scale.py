# BatchNorm1d (training mode) over [N, C, L] = [64, 256, 1024], then a scale and a clamp.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, scale):
        super().__init__()
        self.bn = nn.BatchNorm1d(channels)
        self.scale = scale

    def forward(self, x):
        return torch.clamp(self.bn(x) * self.scale, min=-3.0, max=3.0)


batch, channels, length = 64, 256, 1024


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [channels, 2.0]
