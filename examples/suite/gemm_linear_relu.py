# Linear 4096 -> 4096 on a batch of 4096 rows, fp32, followed by ReLU (KernelBench level 2 style).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.fc(x))


batch, in_features, out_features = 4096, 4096, 4096


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
