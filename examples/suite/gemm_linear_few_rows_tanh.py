# A recurrent cell's step at batch 8: Linear -> tanh, fp32 (8 rows: the GEMM family's skinny
# kernel, which streams the weight once, measured against cuBLASLt's route).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.cell = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.tanh(self.cell(x))


batch, in_features, out_features = 8, 2048, 4096


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
