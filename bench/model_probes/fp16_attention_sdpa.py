"""Multi-head self-attention in float16 through scaled_dot_product_attention (no mask)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim, dtype=torch.float16)
        self.proj = nn.Linear(dim, dim, dtype=torch.float16)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


def get_inputs():
    return [torch.randn(8, 1024, 1024, dtype=torch.float16)]


def get_init_inputs():
    return [1024, 16]
