"""y = gelu_tanh(x * scale + bias): a bias broadcast over the rows, then GELU (tanh form)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x, bias):
        return F.gelu(x * self.scale + bias, approximate="tanh")


rows, cols = 4096, 4096
scale = 0.5


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(cols)]


def get_init_inputs():
    return [scale]
