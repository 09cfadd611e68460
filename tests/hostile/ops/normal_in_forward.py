# exit: 1
# message: forward draws random numbers (normal_)
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x + torch.empty(8, 8).normal_()  # <- here


def get_inputs():
    return [torch.randn(8, 8)]
