# Single op: ReLU over a 256 MiB activation (KernelBench level 1 style).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


batch, dim = 4096, 16384


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return []
