# KernelBench-sized twin of scale_add_op.py (32768 x 16384 fp32: 2 GiB per tensor, 6 GiB in all) for harness.gpu.large.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.w = nn.Parameter(torch.randn(cols))

    def forward(self, x, y):
        return torch.relu(x) * self.w + y


rows, cols = 32768, 16384


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return [cols]
