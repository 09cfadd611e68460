# The op of the accuracy-rule cases (tests/harness/planted/conv_*.cu): a 3x3 convolution in fp32,
# which PyTorch runs on TF32 tensor cores by default (torch.backends.cudnn.allow_tf32), so its own
# output misses the model computed in float64 by more than fp32's 1e-4 tolerance.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 64, 3, padding=1, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(8, 64, 32, 32)]


def get_init_inputs():
    return []
