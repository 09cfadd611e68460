import torch
import torch.nn as nn


class Model(nn.Module):
    """Cumsum of long fp16 rows: [512, 32768] over dim 1 (accumulated in fp32 and fp64)."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(512, 32768, dtype=torch.float16)]


def get_init_inputs():
    return [1]
