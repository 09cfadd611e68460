# exit: 1
# message: Model failed: RuntimeError: bad size
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        raise RuntimeError('bad size')  # <- here

    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(8, 8)]
