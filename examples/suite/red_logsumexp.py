import torch
import torch.nn as nn


class Model(nn.Module):
    """logsumexp over dim 1 of [4096, 8192] (online max + sum, one read)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.logsumexp(x, dim=1)


def get_inputs():
    return [torch.randn(4096, 8192)]


def get_init_inputs():
    return []
