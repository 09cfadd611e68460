# The sum of every element of an int64 tensor (one value, far past 2^32), exact: a full reduction
# split over blocks whose partial states merge in a fixed order.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.sum()


def get_inputs():
    return [torch.randint(0, 2**31, (2048, 4096))]


def get_init_inputs():
    return []
