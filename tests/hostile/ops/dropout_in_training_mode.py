# exit: 1
# message: dropout is random in training mode
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.25)

    def forward(self, x):
        return self.drop(x)  # <- here


def get_inputs():
    return [torch.randn(8, 8)]
