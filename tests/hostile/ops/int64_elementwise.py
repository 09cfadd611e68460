# exit: 1
# message: output out0 is int64; the builtin element-wise kernels write float32
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x + 1  # <- here


def get_inputs():
    return [torch.randint(0, 5, (8, 8))]
