# Advanced indexing by integer tensors as model code writes it: x[rows, :, cols] (indexed dims
# apart: the broadcast index shape comes first), x[:, rows, cols] (adjacent: in their place), and
# negative indices counting from the end.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, rows, cols):
        apart = x[rows, :, cols]   # [16, 8, 64]
        together = x[:, rows, cols]  # [32, 16, 8]
        return apart.reshape(-1)[: 32 * 16 * 8].reshape(32, 16, 8) + together


def get_inputs():
    return [torch.randn(32, 64, 48), torch.randint(-32, 32, (16, 1)), torch.randint(-48, 48, (1, 8))]


def get_init_inputs():
    return []
