import torch
import torch.nn as nn


class Model(nn.Module):
    """L1 normalization of rows too long for registers and of an odd length, so that no row but
    the first starts on a 16-byte boundary (KernelBench level 1 style)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / torch.sum(torch.abs(x), dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(1024, 65535)]


def get_init_inputs():
    return []
