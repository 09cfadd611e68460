# Single op: sigmoid.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.sigmoid(x)


def get_inputs():
    return [torch.randn(4096, 16384)]


def get_init_inputs():
    return []
