import torch
import torch.nn as nn


class Model(nn.Module):
    """LogSoftmax over dim 1 of [4096, 8192]."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.log_softmax(x, dim=self.dim)


batch, features = 4096, 8192


def get_inputs():
    return [torch.randn(batch, features)]


def get_init_inputs():
    return [1]
