# exit: 1
# message: op.py defines no class Model(nn.Module)
import torch
import torch.nn as nn


def get_inputs():
    return [torch.randn(8, 8)]
