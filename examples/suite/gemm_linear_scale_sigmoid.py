# Gemm -> scaling -> sigmoid, fp32 (KernelBench level 2 style).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.gemm(x)
        x = x * self.scaling_factor
        return torch.sigmoid(x)


batch, in_features, out_features, scaling_factor = 2048, 2048, 4096, 2.0


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]
