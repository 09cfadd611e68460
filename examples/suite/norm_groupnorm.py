# GroupNorm with 32 groups on a [32, 256, 64, 64] feature map (KernelBench level 1 style).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, channels)

    def forward(self, x):
        return self.gn(x)


batch, channels, height, width, groups = 32, 256, 64, 64, 32


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [groups, channels]
