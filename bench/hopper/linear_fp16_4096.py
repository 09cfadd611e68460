# An fp16 nn.Linear (no bias) at a transformer's projection size: issue 14's half-precision GEMM
# target. Benchmarked at ARCH sm_90a (EGG_SUITE_ARCH=sm_90a).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4096, 4096, bias=False).to(torch.float16)

    def forward(self, x):
        return self.proj(x)


def get_inputs():
    return [torch.randn(16, 512, 4096, dtype=torch.float16)]


def get_init_inputs():
    return []
