# Cross-entropy (mean) of [32768, 1000] logits against int64 class targets.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, logits, targets):
        return F.cross_entropy(logits, targets)


def get_inputs():
    return [torch.randn(32768, 1000), torch.randint(0, 1000, (32768,))]


def get_init_inputs():
    return []
