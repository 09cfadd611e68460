# Counting with masks, as metrics and length computations write it: a bool mask summed along a dim
# (int64 in PyTorch), torch.count_nonzero, and a count of the whole tensor, returned as int64.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        hits = (x > 0.25).sum(dim=1)
        nonzero = torch.count_nonzero(torch.relu(y), dim=0)
        agree = (x.argmax(dim=1) == y.argmax(dim=1)).sum()
        return hits, nonzero, agree


def get_inputs():
    return [torch.randn(512, 1000), torch.randn(512, 1000)]


def get_init_inputs():
    return []
