# Pre-norm projection: LayerNorm -> Linear -> SiLU in bf16. A row-wise LayerNorm kernel, then
# the GEMM with the SiLU epilogue.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, out_features):
        super().__init__()
        self.norm = nn.LayerNorm(dim, dtype=torch.bfloat16)
        self.fc = nn.Linear(dim, out_features, dtype=torch.bfloat16)

    def forward(self, x):
        return F.silu(self.fc(self.norm(x)))


tokens, dim, out_features = 4096, 2048, 2048


def get_inputs():
    return [torch.randn(tokens, dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return [dim, out_features]
