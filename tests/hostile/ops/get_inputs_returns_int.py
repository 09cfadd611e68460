# exit: 1
# message: get_inputs() returned int, not a list
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():  # <- here
    return 3
