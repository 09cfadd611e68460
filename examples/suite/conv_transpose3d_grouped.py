# ConvTranspose3d 32 -> 16, 3x3x3, stride 2, padding 1, output_padding 1, 2 groups, no bias, then * 2, fp32.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.up = nn.ConvTranspose3d(c_in, c_out, kernel_size=3, stride=2, padding=1,
                                     output_padding=1, groups=2, bias=False)

    def forward(self, x):
        return self.up(x) * 2.0


batch, c_in, c_out, size = 4, 32, 16, 12


def get_inputs():
    return [torch.randn(batch, c_in, size, size, size)]


def get_init_inputs():
    return [c_in, c_out]
