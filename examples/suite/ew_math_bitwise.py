# Bitwise ops of integers (and, or, xor, shifts past the width included), of bool masks (&, |, ^,
# ~) and of a mask with an int (an int64), as hashing, packing and masking code writes them; the
# inputs are named `i` and `r0`, as the kernel's own index and result variables are.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, i, r0):
        k = ((i & 7) ^ (i >> 2 | 3)) + (i << 3) + torch.bitwise_right_shift(i, 70)
        m = (r0 & (x > 0)) | (~r0 ^ (x < -1.0))
        return x * k.float() + m.float() + (r0 & 1).float() * 0.5  # bool & int: int64


def get_inputs():
    return [torch.randn(64, 48), torch.randint(-1000, 1000, (64, 48)), torch.rand(64, 48) > 0.5]


def get_init_inputs():
    return []
