"""A SwiGLU MLP in bfloat16, as inference code runs it: weights and activations in bf16."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False, dtype=torch.bfloat16)
        self.up = nn.Linear(dim, hidden, bias=False, dtype=torch.bfloat16)
        self.down = nn.Linear(hidden, dim, bias=False, dtype=torch.bfloat16)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


def get_inputs():
    return [torch.randn(4096, 2048, dtype=torch.bfloat16)]


def get_init_inputs():
    return [2048, 5632]
