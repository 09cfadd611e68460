# Conv3d 16 -> 32, 3x3x3, padding 1, bias, then SiLU, fp32, [4, 16, 16, 48, 48] (a video/medical block).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv3d(c_in, c_out, kernel_size=3, padding=1)

    def forward(self, x):
        return F.silu(self.conv(x))


batch, c_in, c_out, depth, size = 4, 16, 32, 16, 48


def get_inputs():
    return [torch.randn(batch, c_in, depth, size, size)]


def get_init_inputs():
    return [c_in, c_out]
