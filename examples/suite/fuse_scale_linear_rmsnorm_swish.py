# x * 2 -> Linear -> RMSNorm -> Swish (x * sigmoid(x)), KernelBench level 2 style. The scale before
# the GEMM runs as its own element-wise kernel (the GEMM family fuses epilogues only), then the GEMM
# with bias, then the RMS norm with the swish epilogue.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.norm = nn.RMSNorm(out_features, eps=1e-6)

    def forward(self, x):
        y = self.norm(self.fc(x * 2.0))
        return y * torch.sigmoid(y)


batch, in_features, out_features = 1024, 1024, 2048


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
