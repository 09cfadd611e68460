# exit: 1
# message: output out0 is float64; the builtin element-wise kernels write float32
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2  # <- here


def get_inputs():
    return [torch.randn(8, 8, dtype=torch.float64)]
