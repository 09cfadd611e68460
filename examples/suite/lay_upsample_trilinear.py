# Layout: trilinear upsampling of a volume by 1.5 (a 3-D decoder) plus a nearest-exact resize of a
# coarser volume to the same size.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, vol, coarse):
        v = F.interpolate(vol, scale_factor=1.5, mode="trilinear")
        c = F.interpolate(coarse, size=(24, 30, 36), mode="nearest-exact")
        return v * 2.0 + c


def get_inputs():
    return [torch.randn(4, 32, 16, 20, 24), torch.randn(4, 32, 10, 12, 18)]


def get_init_inputs():
    return []
