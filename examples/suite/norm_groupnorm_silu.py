# Diffusion U-Net block: GroupNorm(32) + SiLU on [16, 512, 32, 32] (KernelBench level 2 style).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, channels)

    def forward(self, x):
        return torch.nn.functional.silu(self.gn(x))


batch, channels, height, width, groups = 16, 512, 32, 32, 32


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [groups, channels]
