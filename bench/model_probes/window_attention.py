"""Swin-style window attention: partition into 7x7 windows, multi-head attention with a learned
relative position bias gathered from a table, merge the windows back."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, heads, window):
        super().__init__()
        self.dim, self.heads, self.w = dim, heads, window
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.table = nn.Parameter(0.02 * torch.randn((2 * window - 1) ** 2, heads))
        coords = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij"))
        flat = coords.flatten(1)
        rel = (flat[:, :, None] - flat[:, None, :]).permute(1, 2, 0) + (window - 1)
        self.register_buffer("index", rel[:, :, 0] * (2 * window - 1) + rel[:, :, 1])

    def forward(self, x):
        B, H, W, C = x.shape
        w = self.w
        x = x.view(B, H // w, w, W // w, w, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, w * w, C)
        n = x.shape[0]
        qkv = self.qkv(x).reshape(n, w * w, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = (q * (C // self.heads) ** -0.5) @ k.transpose(-2, -1)
        bias = self.table[self.index.view(-1)].view(w * w, w * w, -1).permute(2, 0, 1)
        att = (att + bias.unsqueeze(0)).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(n, w * w, C)
        y = self.proj(y).view(B, H // w, W // w, w, w, C).permute(0, 1, 3, 2, 4, 5)
        return y.reshape(B, H, W, C)


def get_inputs():
    return [torch.randn(16, 56, 56, 96)]


def get_init_inputs():
    return [96, 3, 7]
