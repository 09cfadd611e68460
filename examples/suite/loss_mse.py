# MSE loss (mean) of predictions against targets, [128, 32768] (KernelBench level 1 #94 sizes).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, predictions, targets):
        return F.mse_loss(predictions, targets)


def get_inputs():
    return [torch.randn(128, 4096 * 8), torch.randn(128, 4096 * 8)]


def get_init_inputs():
    return []
