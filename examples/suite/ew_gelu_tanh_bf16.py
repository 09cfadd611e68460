# Single op: tanh-approximated GELU in bfloat16 (a transformer MLP activation).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [torch.randn(16, 2048, 4096, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
