# KernelBench-sized twin of scale_add_op.py (8192 x 8192 fp32: 256 MiB per tensor) for the benchmark.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.w = nn.Parameter(torch.randn(cols))

    def forward(self, x, y):
        return torch.relu(x) * self.w + y


rows, cols = 8192, 8192


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return [cols]
