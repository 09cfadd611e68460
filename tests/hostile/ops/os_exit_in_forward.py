# exit: 1
# message: ended abruptly (exit status 3)
import torch
import torch.nn as nn
import os


class Model(nn.Module):
    def forward(self, x):
        os._exit(3)


def get_inputs():
    return [torch.randn(8, 8)]
