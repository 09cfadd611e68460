import torch
import torch.nn as nn


class Model(nn.Module):
    """Argmax over dim 1 of [64, 1024, 512] (a strided reduction: int64 indices out)."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.argmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(64, 1024, 512)]


def get_init_inputs():
    return [1]
