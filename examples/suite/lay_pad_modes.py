# Layout: reflection, replication and circular padding (F.pad's modes of those names, as image
# and periodic-boundary models pad before a convolution), summed.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y, z):
        pad = (2, 3, 1, 2)
        return (F.pad(x, pad, mode="reflect") + 0.5 * F.pad(y, pad, mode="replicate")
                - F.pad(z, pad, mode="circular"))


def get_inputs():
    return [torch.randn(16, 32, 61, 59), torch.randn(16, 32, 61, 59), torch.randn(16, 32, 61, 59)]


def get_init_inputs():
    return []
