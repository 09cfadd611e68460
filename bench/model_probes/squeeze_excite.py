"""A squeeze-and-excitation block after a 3x3 convolution: global average pool, two 1x1
convolutions with SiLU and sigmoid, channel gating, residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, c, r):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.fc1 = nn.Conv2d(c, c // r, 1)
        self.fc2 = nn.Conv2d(c // r, c, 1)

    def forward(self, x):
        y = self.conv(x)
        s = F.adaptive_avg_pool2d(y, 1)
        s = torch.sigmoid(self.fc2(F.silu(self.fc1(s))))
        return x + y * s


def get_inputs():
    return [torch.randn(32, 64, 64, 64)]


def get_init_inputs():
    return [64, 4]
