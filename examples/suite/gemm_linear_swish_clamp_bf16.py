# Gemm -> Swish -> clamp, bf16 (KernelBench level 2 style), a SwiGLU-sized up-projection.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, dtype=torch.bfloat16)

    def forward(self, x):
        x = F.silu(self.fc(x))
        return torch.clamp(x, min=-1.0, max=1.0)


batch, in_features, out_features = 4096, 4096, 8192


def get_inputs():
    return [torch.randn(batch, in_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [in_features, out_features]
