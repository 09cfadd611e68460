# ConvTranspose2d 128 -> 64, 4x4, stride 2, padding 1 (2x upsampling, a DCGAN/U-Net decoder), bias, ReLU, fp32.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.up = nn.ConvTranspose2d(c_in, c_out, kernel_size=4, stride=2, padding=1)

    def forward(self, x):
        return torch.relu(self.up(x))


batch, c_in, c_out, size = 16, 128, 64, 32


def get_inputs():
    return [torch.randn(batch, c_in, size, size)]


def get_init_inputs():
    return [c_in, c_out]
