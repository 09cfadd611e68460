# Linear without bias + ReLU6, fp16 (a classifier head over a batch of 2048: [2048, 1024] x [1024, 1024]).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=False, dtype=torch.float16)
        self.act = nn.ReLU6()

    def forward(self, x):
        return self.act(self.fc(x))


batch, in_features, out_features = 2048, 1024, 1024


def get_inputs():
    return [torch.randn(batch, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features]
