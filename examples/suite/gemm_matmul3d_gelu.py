# A [batch, seq, hidden] activation times a weight matrix [hidden, 4*hidden], then GELU (erf), fp32.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.w = nn.Parameter(torch.randn(hidden, 4 * hidden) / hidden ** 0.5)

    def forward(self, x):
        return F.gelu(torch.matmul(x, self.w))


batch, seq, hidden = 8, 512, 1024


def get_inputs():
    return [torch.randn(batch, seq, hidden)]


def get_init_inputs():
    return [hidden]
