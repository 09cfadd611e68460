# Post-norm residual block tail in bf16: layer_norm(x + residual) * scale (prologue add, broadcast
# epilogue), [4, 2048, 2048].
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.weight = nn.Parameter(torch.ones(dim, dtype=torch.bfloat16))
        self.bias = nn.Parameter(torch.zeros(dim, dtype=torch.bfloat16))
        self.scale = nn.Parameter(torch.rand(dim, dtype=torch.bfloat16) + 0.5)

    def forward(self, x, residual):
        h = F.layer_norm(x + residual, (self.dim,), self.weight, self.bias, 1e-5)
        return h * self.scale


batch, seq, dim = 4, 2048, 2048


def get_inputs():
    return [torch.randn(batch, seq, dim, dtype=torch.bfloat16),
            torch.randn(batch, seq, dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return [dim]
