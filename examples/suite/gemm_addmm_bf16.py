# torch.addmm with beta and alpha, bf16: out = 0.5 * bias + 2.0 * (x @ w).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(k, n, dtype=torch.bfloat16) / k ** 0.5)
        self.bias = nn.Parameter(torch.randn(n, dtype=torch.bfloat16))

    def forward(self, x):
        return torch.addmm(self.bias, x, self.weight, beta=0.5, alpha=2.0)


m, k, n = 4096, 4096, 4096


def get_inputs():
    return [torch.randn(m, k, dtype=torch.bfloat16)]


def get_init_inputs():
    return [k, n]
