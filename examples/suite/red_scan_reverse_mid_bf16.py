import torch
import torch.nn as nn


class Model(nn.Module):
    """Reverse exclusive cumsum along the middle dim of a bf16 [32, 1024, 256] tensor."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        rev = torch.flip(torch.cumsum(torch.flip(x, [self.dim]), dim=self.dim), [self.dim])
        return rev - x


def get_inputs():
    return [torch.randn(32, 1024, 256, dtype=torch.bfloat16)]


def get_init_inputs():
    return [1]
