import torch
import torch.nn as nn


class Model(nn.Module):
    """Max over a middle dim of [32, 1024, 1024] (strided reduction)."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.amax(x, dim=1)


def get_inputs():
    return [torch.randn(32, 1024, 1024)]


def get_init_inputs():
    return []
