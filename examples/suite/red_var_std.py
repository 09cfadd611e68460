# Variance and standard deviation over the last dim: a mean and a sum of squared deviations.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        return (x - x.mean(dim=-1, keepdim=True)) / (x.var(dim=-1, keepdim=True) + 1e-5).sqrt() + x.std(dim=-1, keepdim=True)


def get_inputs():
    return [torch.randn(4096, 512)]


def get_init_inputs():
    return []
