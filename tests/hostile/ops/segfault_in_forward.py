# exit: 1
# message: ended abruptly (killed by signal 11 (SIGSEGV))
import torch
import torch.nn as nn
import ctypes


class Model(nn.Module):
    def forward(self, x):
        ctypes.string_at(0)
        return x


def get_inputs():
    return [torch.randn(8, 8)]
