# The op of the planted candidates (tests/harness/planted/common.cuh): out = relu(x) * w + y.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.w = nn.Parameter(torch.randn(cols))

    def forward(self, x, y):
        return torch.relu(x) * self.w + y


rows, cols = 1024, 4096


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return [cols]
