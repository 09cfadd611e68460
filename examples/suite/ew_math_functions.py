# Element-wise: the math functions of torch (log1p, expm1, log2, log10, exp2, trigonometric and
# hyperbolic, erf/erfc, rounding, sign, remainder, fmod, atan2), as real model code scatters them.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        a = torch.log1p(x.abs()) + torch.expm1(y * 0.5) - torch.log2(y.abs() + 1.0) * torch.log10(x * x + 2.0)
        b = torch.exp2(torch.tanh(x)) + torch.sin(x) * torch.cos(y) - torch.tan(torch.tanh(y))
        c = torch.asin(torch.tanh(x)) + torch.acos(torch.tanh(y)) + torch.atan(x) + torch.sinh(torch.tanh(y))
        d = torch.cosh(torch.tanh(x)) + torch.erf(y) - torch.erfc(x) + torch.floor(x * 3.0) + torch.ceil(y * 3.0)
        e = torch.trunc(x * 2.5) + torch.round(y * 2.5) + torch.sign(x - y) + torch.remainder(x, 0.7)
        f = torch.fmod(y, -0.6) + torch.atan2(x, y)
        return a + b + c + d + e + f


def get_inputs():
    return [torch.randn(64, 1024, 256), torch.randn(64, 1024, 256)]


def get_init_inputs():
    return []
