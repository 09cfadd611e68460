# Layout: the real and imaginary planes of a complex-as-pairs tensor swapped and stacked
# (select, stack, slice with a step).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        re, im = x[..., 0], x[..., 1]
        return torch.stack((-im, re), dim=-1)[:, ::2] + x[:, 1::2]


def get_inputs():
    return [torch.randn(64, 4096, 2)]


def get_init_inputs():
    return []
