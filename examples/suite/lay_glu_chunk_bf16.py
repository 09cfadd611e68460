# Layout: a gated linear unit in bfloat16, the halves taken by chunk (a * sigmoid(b)).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        return a * torch.sigmoid(b)


def get_inputs():
    return [torch.randn(16, 1024, 4096, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
