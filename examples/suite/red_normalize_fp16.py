# F.normalize over the last dim in fp16 (embedding normalization before a cosine similarity), [16384, 2048].
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.normalize(x, p=2.0, dim=-1)


def get_inputs():
    return [torch.randn(16384, 2048, dtype=torch.float16)]


def get_init_inputs():
    return []
