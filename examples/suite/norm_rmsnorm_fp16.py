# RMSNorm of a transformer hidden state [8, 2048, 4096] in fp16 (eps=None: float32's epsilon).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.RMSNorm(hidden, dtype=torch.float16)

    def forward(self, x):
        return self.norm(x)


batch, seq, hidden = 8, 2048, 4096


def get_inputs():
    return [torch.randn(batch, seq, hidden, dtype=torch.float16)]


def get_init_inputs():
    return [hidden]
