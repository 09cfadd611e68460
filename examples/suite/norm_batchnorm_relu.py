# BatchNorm2d (training mode: batch statistics, as KernelBench builds models) + ReLU on a ResNet
# stage-2 activation [64, 128, 56, 56].
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return torch.relu(self.bn(x))


batch, channels, height, width = 64, 128, 56, 56


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return [channels]
