# Layout: NCHW to NHWC in float16 (permute + contiguous) with a per-channel scale.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(channels, dtype=torch.float16))

    def forward(self, x):
        return x.permute(0, 2, 3, 1).contiguous() * self.scale


def get_inputs():
    return [torch.randn(32, 128, 56, 56, dtype=torch.float16)]


def get_init_inputs():
    return [128]
