# LayerNorm over the last dim of a [4096, 8192] fp32 activation (KernelBench level 1 style).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return self.norm(x)


batch, dim = 4096, 8192


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return [dim]
