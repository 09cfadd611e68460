# Transformer residual branch in training mode: bias, GELU, dropout, residual add, then the
# (B, C, T) layout of a following convolution (the dropout read at a transposed index).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, p):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim))
        self.drop = nn.Dropout(p)

    def forward(self, x):
        h = self.drop(F.gelu(x + self.bias))
        return (x + h).transpose(1, 2)


batch, tokens, dim = 4, 512, 768


def get_inputs():
    return [torch.randn(batch, tokens, dim)]


def get_init_inputs():
    return [dim, 0.1]
