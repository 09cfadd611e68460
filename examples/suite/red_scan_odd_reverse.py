import torch
import torch.nn as nn


class Model(nn.Module):
    """Reverse exclusive cumsum along rows of odd length (no row but the first starts on a 16-byte
    boundary): each chunk is read and written coalesced through shared memory."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.flip(torch.cumsum(torch.flip(x, [1]), dim=1), [1]) - x


def get_inputs():
    return [torch.rand(2048, 30001)]


def get_init_inputs():
    return []
