"""ViT-style attention over image patches: (N, C, H, W) flattened to tokens, a class token,
multi-head attention written out (q @ k^T * scale, softmax, @ v), a projection, then the class
token's features (select) and the max over tokens (torch.max(..., dim).values)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, heads):
        super().__init__()
        self.heads = heads
        self.scale = (channels // heads) ** -0.5
        self.cls = nn.Parameter(torch.randn(1, 1, channels) * 0.02)
        self.norm = nn.LayerNorm(channels)
        self.qkv = nn.Linear(channels, 3 * channels)
        self.proj = nn.Linear(channels, channels)

    def forward(self, x):
        N, C, H, W = x.shape
        tokens = x.flatten(2).transpose(1, 2)                      # (N, H*W, C)
        tokens = torch.cat([self.cls.expand(N, -1, -1), tokens], dim=1)
        T = tokens.size(1)
        qkv = self.qkv(self.norm(tokens)).reshape(N, T, 3, self.heads, C // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        att = (q @ k.transpose(-2, -1)) * self.scale
        y = (att.softmax(dim=-1) @ v).transpose(1, 2).reshape(N, T, C)
        y = tokens + self.proj(y)
        return y[:, 0], torch.max(y[:, 1:], dim=1).values


def get_inputs():
    return [torch.randn(4, 192, 14, 14)]


def get_init_inputs():
    return [192, 6]
