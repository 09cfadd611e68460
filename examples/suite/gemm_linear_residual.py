# Linear (with bias) + residual add, fp32: a transformer block's output projection.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, residual):
        return self.proj(x) + residual


tokens, dim = 2048, 4096


def get_inputs():
    return [torch.randn(tokens, dim), torch.randn(tokens, dim)]


def get_init_inputs():
    return [dim]
