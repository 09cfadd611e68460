# exit: 1
# message: forward failed on the declared inputs: RuntimeError
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x @ torch.ones(3, 5)  # <- here


def get_inputs():
    return [torch.randn(8, 8)]
