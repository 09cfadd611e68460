# exit: 1
# message: forward draws random numbers (rand)
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x + torch.rand(8, 8)  # <- here


def get_inputs():
    return [torch.randn(8, 8)]
