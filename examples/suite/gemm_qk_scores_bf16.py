# Attention scores: q @ k^T * scale in bf16 (k read transposed, no copy), [32 heads, 1024, 64].
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, q, k):
        return torch.matmul(q, k.transpose(-2, -1)) * self.scale


heads, seq, head_dim = 32, 1024, 64


def get_inputs():
    return [torch.randn(heads, seq, head_dim, dtype=torch.bfloat16),
            torch.randn(heads, seq, head_dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return [head_dim ** -0.5]
