# exit: 1
# message: forward draws random numbers (randn_like)
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x * torch.randn_like(x)  # <- here


def get_inputs():
    return [torch.randn(8, 8)]
