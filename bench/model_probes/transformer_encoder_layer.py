"""nn.TransformerEncoderLayer, pre-norm, GELU, batch first (eval mode: no dropout)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, heads, ff):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(dim, heads, ff, dropout=0.1, activation="gelu",
                                                batch_first=True, norm_first=True)

    def forward(self, x):
        return self.layer(x)


def get_inputs():
    return [torch.randn(8, 256, 512)]


def get_init_inputs():
    return [512, 8, 2048]
