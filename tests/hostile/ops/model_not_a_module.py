# exit: 1
# message: Model is not a subclass of torch.nn.Module
import torch
import torch.nn as nn
class Model:  # <- here
    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(8, 8)]
