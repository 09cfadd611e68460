# exit: 1
# message: forward draws random numbers (bernoulli)
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.bernoulli(torch.sigmoid(x))  # <- here


def get_inputs():
    return [torch.randn(8, 8)]
