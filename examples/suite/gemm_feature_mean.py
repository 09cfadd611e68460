# A linear layer whose output features are averaged right away (a pooled score): the mean over the
# features of x W^T + b - shift is x . mean(W) + mean(b - shift), so EGG measures that rewrite (a
# column sum of W and a dot product per row, no [M, N] product) beside the GEMM; torch.compile and
# eager run the GEMM.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.proj = nn.Linear(in_features, out_features)
        self.shift = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        score = (self.proj(x) - self.shift).mean(dim=-1, keepdim=True)
        return torch.tanh(score) * 2.0


def get_inputs():
    return [torch.randn(2048, 4096)]


def get_init_inputs():
    return [4096, 4096]
