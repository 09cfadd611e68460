# Layout: a vision transformer's class token expanded over the batch and prepended (expand, cat).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, 197, dim))

    def forward(self, x):
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        return torch.cat((cls, x), dim=1) + self.pos


def get_inputs():
    return [torch.randn(64, 196, 768)]


def get_init_inputs():
    return [768]
