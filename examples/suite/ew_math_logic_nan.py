# Numerically careful element-wise math as model code writes it: hypot, logaddexp(2), xlogy (an
# entropy term), nan_to_num, NaN/inf tests and logical ops on masks, and F.rrelu in eval mode.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x, y):
        p = torch.sigmoid(y)
        entropy = -(torch.xlogy(p, p) + torch.xlogy(1 - p, 1 - p))
        mask = torch.logical_and(x > -1, torch.logical_or(y > 0, torch.isfinite(torch.log(x))))
        clean = torch.nan_to_num(torch.log(x), nan=0.0, neginf=-20.0)
        flags = torch.isnan(torch.sqrt(y)).float() + torch.isinf(1 / x).float()
        return (torch.hypot(x, y) + torch.logaddexp(x, y) + torch.logaddexp2(x, -y) + entropy +
                torch.where(torch.logical_xor(mask, x > 0), clean, flags) +
                F.rrelu(x, training=False))


batch, dim = 1024, 2048


def get_inputs():
    x = torch.randn(batch, dim)
    x[::7, ::13] = 0.0  # log(0) = -inf, 1 / 0 = inf
    return [x, torch.randn(batch, dim)]


def get_init_inputs():
    return []
