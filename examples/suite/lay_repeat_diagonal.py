# Tiling and diagonals as model code writes them: x.repeat and torch.tile (with a new leading
# dim), and torch.diagonal above and below the main one (a banded matrix's bands).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, m):
        tiled = x.repeat(2, 1, 3) + torch.tile(x, (2, 1, 3))
        bands = torch.diagonal(m, offset=1, dim1=-2, dim2=-1) + \
            torch.diagonal(m, offset=-1, dim1=1, dim2=2).flip(-1)
        return tiled.reshape(-1)[: 16 * 255 * 8].reshape(16, 255, 8) + bands.unsqueeze(-1)


def get_inputs():
    return [torch.randn(64, 128, 32), torch.randn(16, 256, 256)]


def get_init_inputs():
    return []
