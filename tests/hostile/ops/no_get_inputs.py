# exit: 1
# message: op.py defines no function get_inputs()
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x + 1
