# Linear + GELU (tanh approximation), fp16: an MLP up-projection as in GPT-2 style blocks.
# [1024, 1024] x [1024, 4096]: a GPT-2 medium MLP up-projection over 1024 tokens.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, dtype=torch.float16)
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.act(self.fc(x))


batch, in_features, out_features = 1024, 1024, 4096


def get_inputs():
    return [torch.randn(batch, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features]
