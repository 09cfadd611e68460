# The fp32 GEMM of issue 14's split-precision target: [1024, 8192] x [8192, 8192], B stored [K][N].
# Benchmarked with `--option precision=fp32x3` (egg_kernel's PRECISION fp32x3) against cuBLAS's SGEMM.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


m, k, n = 1024, 8192, 8192


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
