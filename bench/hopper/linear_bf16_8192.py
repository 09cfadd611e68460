# A bf16 nn.Linear with a fused GELU at an inference size: issue 14's half-precision GEMM target
# (the own wgmma kernel at >= 95 % of cuBLASLt's best). Benchmarked at ARCH sm_90a
# (EGG_SUITE_ARCH=sm_90a), where the GEMM family proposes it.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8192, 8192).to(torch.bfloat16)

    def forward(self, x):
        return F.gelu(self.fc(x))


def get_inputs():
    return [torch.randn(8192, 8192, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
