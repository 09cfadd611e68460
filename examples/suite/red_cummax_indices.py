# torch.cummax's values and indices and torch.cummin's indices along rows of 1000, with ties (the
# inputs rounded to a tenth): each index the position of the latest element equal to the running
# extreme, as torch defines it.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        hi = torch.cummax(x, dim=1)
        lo = torch.cummin(x, dim=1)
        return hi.values, hi.indices, lo.indices


def get_inputs():
    return [torch.round(torch.randn(256, 1000) * 10) / 10]


def get_init_inputs():
    return []
