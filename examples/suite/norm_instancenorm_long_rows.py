# InstanceNorm2d (affine) with a ReLU on [4, 32, 512, 512]: rows of 256 K elements (1 MiB), too
# long for registers.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(channels, affine=True)

    def forward(self, x):
        return torch.relu(self.inorm(x))


batch, channels, height, width = 4, 32, 512, 512


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels]
