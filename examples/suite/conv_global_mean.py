# A strided, padded 3x3 convolution scaled and shifted, then averaged over every position (a
# global average pool) before a sigmoid. The mean of a convolution is a product with the input's
# window sums (each kernel offset's sum of the input positions it reaches, from 0/1 masks per
# axis), so EGG measures one [N, C_in 9] x [C_in 9, C_out] product beside cuDNN's convolution
# and its pool; eager and torch.compile run the convolution.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=2, padding=1)

    def forward(self, x):
        y = self.conv(x) * 2.0 - 1.0
        return torch.sigmoid(y.mean(dim=(2, 3)))


def get_inputs():
    return [torch.randn(8, 32, 129, 129)]


def get_init_inputs():
    return [32, 64]
