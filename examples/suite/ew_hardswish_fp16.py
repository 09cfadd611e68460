# Single op: hardswish in float16 (MobileNetV3 activation).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.hardswish(x)


def get_inputs():
    return [torch.randn(8192, 8192, dtype=torch.float16)]


def get_init_inputs():
    return []
