# Layout with an integer input: int64 indices transposed and converted to float (PyTorch converts
# them for the float result; the kernel reads int64 and computes in float).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, idx, x):
        return idx.t().float() * 0.5 + x


def get_inputs():
    return [torch.randint(0, 1000, (256, 1024)), torch.randn(1024, 256)]


def get_init_inputs():
    return []
