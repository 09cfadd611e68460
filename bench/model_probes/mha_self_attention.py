"""nn.MultiheadAttention as a ViT uses it (batch first, self-attention, eval mode)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        h = self.norm(x)
        y, _ = self.attn(h, h, h, need_weights=False)
        return x + y


def get_inputs():
    return [torch.randn(16, 197, 384)]


def get_init_inputs():
    return [384, 6]
