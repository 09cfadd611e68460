# torch.linalg.vector_norm with ord=inf over a middle dim (a column reduction of |x|), [32, 1024, 1024] fp32.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.linalg.vector_norm(x, ord=float("inf"), dim=1)


def get_inputs():
    return [torch.randn(32, 1024, 1024)]


def get_init_inputs():
    return []
