# Fused chain: per-channel scale and bias on an NCHW activation, then ReLU (a conv epilogue).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(channels, 1, 1))
        self.bias = nn.Parameter(torch.randn(channels, 1, 1))

    def forward(self, x):
        return torch.relu(x * self.scale + self.bias)


def get_inputs():
    return [torch.randn(32, 256, 64, 64)]


def get_init_inputs():
    return [256]
