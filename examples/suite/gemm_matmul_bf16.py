# Square matmul 4096 x 4096 x 4096 in bf16 (KernelBench level 1, "Square matrix multiplication").
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


N = 4096


def get_inputs():
    return [torch.randn(N, N, dtype=torch.bfloat16), torch.randn(N, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
