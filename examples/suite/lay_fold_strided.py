# F.fold with a strided, dilated, padded 3x2 window on an odd-sized image: patches that skip rows
# and columns (zeros between them) and overlap elsewhere.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, cols):
        return F.fold(cols, output_size=(17, 23), kernel_size=(3, 2), dilation=(2, 1), padding=(1, 2),
                      stride=(2, 3))


def get_inputs():
    return [torch.randn(4, 6 * 6, 8 * 9)]


def get_init_inputs():
    return []
