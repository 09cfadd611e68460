import torch
import torch.nn as nn


class Model(nn.Module):
    """Masked cumsum over dim 1 of [4096, 8192]: only the elements where the bool mask is set."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=self.dim)


def get_inputs():
    x = torch.randn(4096, 8192)
    mask = torch.randint(0, 2, (4096, 8192)).bool()
    return [x, mask]


def get_init_inputs():
    return [1]
