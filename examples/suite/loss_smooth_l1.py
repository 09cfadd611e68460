# Smooth L1 loss (beta 1, mean), [128, 32768] (KernelBench level 1 #96 style).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.SmoothL1Loss()

    def forward(self, predictions, targets):
        return self.loss(predictions, targets)


def get_inputs():
    return [torch.randn(128, 4096 * 8), torch.randn(128, 4096 * 8)]


def get_init_inputs():
    return []
