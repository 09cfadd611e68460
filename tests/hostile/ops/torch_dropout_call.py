# exit: 1
# message: EGG generates dropout written as F.dropout, nn.Dropout or attention
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.dropout(x, 0.25, True)  # <- here


def get_inputs():
    return [torch.randn(8, 8)]
