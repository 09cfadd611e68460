# Fused chain: SwiGLU-style gating in float16, silu(a) * b.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, a, b):
        return F.silu(a) * b


def get_inputs():
    return [torch.randn(8, 2048, 8192, dtype=torch.float16), torch.randn(8, 2048, 8192, dtype=torch.float16)]


def get_init_inputs():
    return []
