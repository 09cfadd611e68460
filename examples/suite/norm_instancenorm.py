# InstanceNorm2d (affine) on a style-transfer feature map [16, 64, 128, 128].
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(channels, affine=True)

    def forward(self, x):
        return self.inorm(x)


batch, channels, height, width = 16, 64, 128, 128


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels]
