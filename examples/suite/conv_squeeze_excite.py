# A squeeze-excitation block (SENet, EfficientNet, MobileNetV3) at batch 8, fp32: the global mean,
# two 1x1 convolutions of the pooled [8, 256, 1, 1] with ReLU and sigmoid, and the channels of the
# feature map scaled by the result. The convolutions of one position are products (the GEMM
# family's skinny kernel with the activation as its epilogue), not cuDNN calls.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, squeezed):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.reduce = nn.Conv2d(channels, squeezed, kernel_size=1)
        self.expand = nn.Conv2d(squeezed, channels, kernel_size=1)

    def forward(self, x):
        s = torch.relu(self.reduce(self.pool(x)))
        return x * torch.sigmoid(self.expand(s))


batch, channels, squeezed, size = 8, 256, 64, 28


def get_inputs():
    return [torch.randn(batch, channels, size, size)]


def get_init_inputs():
    return [channels, squeezed]
