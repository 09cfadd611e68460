# An exclusive running sum of int64 counts along a row, written as PyTorch code writes it (there is
# no exclusive cumsum): the identity in front of the inclusive sum of all but the last element.
# EGG reads it as the exclusive scan of the whole row (exact; offsets from counts, as a ragged
# batch's row starts are computed).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, counts):
        head = torch.zeros_like(counts[:, :1])
        return torch.cat((head, torch.cumsum(counts[:, :-1], dim=1)), dim=1)


def get_inputs():
    return [torch.randint(-(2**40), 2**40, (48, 2051))]


def get_init_inputs():
    return []
