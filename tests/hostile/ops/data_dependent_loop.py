# exit: 1
# message: data-dependent control flow
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        for row in x:  # <- here
            x = x + row
        return x


def get_inputs():
    return [torch.randn(8, 8)]
