"""A U-Net decoder step: nearest upsampling, concatenation with the skip connection, two
convolutions with BatchNorm and ReLU (eval mode)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, cin, cskip, cout):
        super().__init__()
        self.c1 = nn.Conv2d(cin + cskip, cout, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)

    def forward(self, x, skip):
        x = F.interpolate(x, scale_factor=2, mode="nearest")
        x = torch.cat([x, skip], dim=1)
        x = F.relu(self.b1(self.c1(x)))
        return F.relu(self.b2(self.c2(x)))


def get_inputs():
    return [torch.randn(16, 128, 32, 32), torch.randn(16, 64, 64, 64)]


def get_init_inputs():
    return [128, 64, 64]
