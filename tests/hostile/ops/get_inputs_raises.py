# exit: 1
# message: get_inputs() failed: ValueError: no inputs today
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    raise ValueError('no inputs today')  # <- here
