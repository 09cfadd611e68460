"""A mixture of four expert MLPs weighted by a softmax gate (dense routing: every token through
every expert, as small MoE layers are written)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, hidden, experts):
        super().__init__()
        self.gate = nn.Linear(dim, experts, bias=False)
        self.up = nn.ModuleList([nn.Linear(dim, hidden) for _ in range(experts)])
        self.down = nn.ModuleList([nn.Linear(hidden, dim) for _ in range(experts)])

    def forward(self, x):
        g = F.softmax(self.gate(x), dim=-1)
        out = torch.zeros_like(x)
        for i in range(len(self.up)):
            out = out + g[:, i:i + 1] * self.down[i](F.gelu(self.up[i](x)))
        return out


def get_inputs():
    return [torch.randn(4096, 512)]


def get_init_inputs():
    return [512, 1024, 4]
