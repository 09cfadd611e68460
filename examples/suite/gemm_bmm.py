# Batched matmul [32, 1024, 1024] x [32, 1024, 1024], fp32 (KernelBench level 1, "Batched matrix multiplication").
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b)


batch, m, k, n = 32, 1024, 1024, 1024


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, k, n)]


def get_init_inputs():
    return []
