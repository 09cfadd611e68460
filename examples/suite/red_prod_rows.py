import torch
import torch.nn as nn


class Model(nn.Module):
    """Product of 1 + 0.1*x over short rows of 64 (a warp per row)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.prod(1.0 + 0.1 * x, dim=-1)


def get_inputs():
    return [torch.randn(262144, 64)]


def get_init_inputs():
    return []
