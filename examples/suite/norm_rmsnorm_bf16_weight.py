# Llama-style RMSNorm via F.rms_norm (eps 1e-6) with a learned weight, bf16 [8, 1024, 4096].
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.dim = hidden
        self.weight = nn.Parameter(torch.rand(hidden, dtype=torch.bfloat16) + 0.5)

    def forward(self, x):
        return F.rms_norm(x, (self.dim,), self.weight, 1e-6)


batch, seq, hidden = 8, 1024, 4096


def get_inputs():
    return [torch.randn(batch, seq, hidden, dtype=torch.bfloat16)]


def get_init_inputs():
    return [hidden]
