# The k smallest distances per query (nearest neighbours): topk(largest=False) along the last dim,
# values and indices, in ascending order.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, distances):
        return torch.topk(distances, self.k, dim=-1, largest=False)


queries, keys = 4096, 1000


def get_inputs():
    return [torch.rand(queries, keys)]


def get_init_inputs():
    return [16]
