# Layout: nearest-neighbour upsampling as a decoder or FPN writes it: F.interpolate by a scale
# factor of 2, and to a size that is no multiple of the input, summed with a skip connection.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, coarse, skip):
        up = F.interpolate(coarse, scale_factor=2, mode="nearest")
        odd = F.interpolate(x, size=(100, 90), mode="nearest") * 0.5
        return up + odd + skip


def get_inputs():
    return [torch.randn(16, 64, 48, 48), torch.randn(16, 64, 50, 45), torch.randn(16, 64, 100, 90)]


def get_init_inputs():
    return []
