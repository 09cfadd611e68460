# Linear -> LayerNorm -> GELU (a transformer MLP block's projection, KernelBench level 2 style):
# planned as a cuBLASLt GEMM (bias fused) and one LayerNorm kernel with the GELU epilogue.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.norm = nn.LayerNorm(out_features)

    def forward(self, x):
        return F.gelu(self.norm(self.fc(x)))


batch, in_features, out_features = 1024, 2048, 4096


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
