# exit: 1
# message: Model is not a subclass of torch.nn.Module
import torch
import torch.nn as nn
def Model():  # <- here
    return None


def get_inputs():
    return [torch.randn(8, 8)]
