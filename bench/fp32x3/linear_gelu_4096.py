# nn.Linear 4096 -> 4096 (weight [N][K]) with its bias and an exact GELU, batch 4096, fp32: the
# 3xTF32 kernel with a fused epilogue against cuBLASLt's SGEMM and the epilogue kernel.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.nn.functional.gelu(self.fc(x))


batch, in_features, out_features = 4096, 4096, 4096


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
