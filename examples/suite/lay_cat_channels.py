# Layout: an Inception-style channel concatenation of three branches, then ReLU (torch.cat).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b, c):
        return torch.relu(torch.cat([a, b, c], dim=1))


def get_inputs():
    return [torch.randn(16, 64, 56, 56), torch.randn(16, 32, 56, 56), torch.randn(16, 96, 56, 56)]


def get_init_inputs():
    return []
