# Batched matmul in bf16 followed by a scale (attention-style probabilities x values, scaled).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, p, v):
        return torch.bmm(p, v) * self.scale


batch, m, k, n = 32, 1024, 1024, 128


def get_inputs():
    return [torch.randn(batch, m, k, dtype=torch.bfloat16), torch.randn(batch, k, n, dtype=torch.bfloat16)]


def get_init_inputs():
    return [0.125]
