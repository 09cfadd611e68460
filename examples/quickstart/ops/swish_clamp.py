"""y = clamp(silu(x), lo, hi): SiLU (swish), then a clamp."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, lo, hi):
        super().__init__()
        self.lo = lo
        self.hi = hi

    def forward(self, x):
        return torch.clamp(F.silu(x), min=self.lo, max=self.hi)


batch, dim = 2048, 1024
lo, hi = -0.25, 2.0


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return [lo, hi]
