# exit: 1
# message: computes int64; the builtin kernels compute integers with add, sub, mul
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.fmod(x, 3) * 3  # <- here


def get_inputs():
    return [torch.randint(-5, 5, (8, 8))]
