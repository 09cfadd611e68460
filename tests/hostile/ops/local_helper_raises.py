# exit: 1
# message: executing op.py failed: ZeroDivisionError
import torch
import torch.nn as nn
import egg_hostile_helper_raises  # noqa: F401
class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(8, 8)]
