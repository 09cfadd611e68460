import torch
import torch.nn as nn


class Model(nn.Module):
    """Exclusive cumsum as PyTorch code writes it (torch has none): zeros in front of the inclusive
    cumsum of all but the last element. EGG scans the shifted input, read through the slice and the
    cat by index, in one kernel."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cat((torch.zeros_like(x[:, :1]), torch.cumsum(x[:, :-1], dim=1)), dim=1)


def get_inputs():
    return [torch.rand(2048, 8192)]


def get_init_inputs():
    return []
