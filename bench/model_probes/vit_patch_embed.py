"""A ViT stem: a strided convolution into patches, flatten, a class token prepended, position
embeddings added, LayerNorm."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, patch, dim, n):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, dim))
        self.pos = nn.Parameter(0.02 * torch.randn(1, n + 1, dim))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        x = self.proj(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)
        return self.norm(x + self.pos)


def get_inputs():
    return [torch.randn(32, 3, 224, 224)]


def get_init_inputs():
    return [16, 768, 196]
