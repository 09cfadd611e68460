# LayerNorm + GELU epilogue on a transformer MLP activation [8192, 4096] fp32.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return F.gelu(self.norm(x))


rows, dim = 8192, 4096


def get_inputs():
    return [torch.randn(rows, dim)]


def get_init_inputs():
    return [dim]
