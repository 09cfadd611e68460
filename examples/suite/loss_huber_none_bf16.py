# Huber loss (delta 0.5, reduction none) then * 0.5, bf16 [256, 16384].
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, predictions, targets):
        return F.huber_loss(predictions, targets, reduction='none', delta=0.5) * 0.5


def get_inputs():
    return [torch.randn(256, 16384, dtype=torch.bfloat16), torch.randn(256, 16384, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
