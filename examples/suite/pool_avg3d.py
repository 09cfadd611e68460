# AvgPool3d(kernel 3, stride 2, padding 1) on a [8, 32, 32, 64, 64] volume (count_include_pad=True).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(8, 32, 32, 64, 64)]


def get_init_inputs():
    return []
