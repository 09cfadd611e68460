# A sum over dims that are not adjacent (0 and 2, keepdim): a permuted copy, then the sum over
# the last dims.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return x.sum(dim=(0, 2), keepdim=True)


def get_inputs():
    return [torch.randn(16, 256, 512)]


def get_init_inputs():
    return []
