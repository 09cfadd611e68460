# GroupNorm on an (N, C) input, as after a linear layer: one spatial element per channel.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(16, 512)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(4096, 512)]


def get_init_inputs():
    return []
