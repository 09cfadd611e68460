# F.conv1d 256 -> 384, kernel 5, dilation 2, padding='same', bias, then GELU, fp32, [16, 256, 2000].
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, c_in, c_out, kernel):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(c_out, c_in, kernel) / (c_in * kernel) ** 0.5)
        self.bias = nn.Parameter(torch.randn(c_out) * 0.1)

    def forward(self, x):
        return F.gelu(F.conv1d(x, self.weight, self.bias, padding="same", dilation=2))


batch, c_in, c_out, kernel, length = 16, 256, 384, 5, 2000


def get_inputs():
    return [torch.randn(batch, c_in, length)]


def get_init_inputs():
    return [c_in, c_out, kernel]
