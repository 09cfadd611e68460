# An int64 result computed and stored exactly: bucket ids from integer arithmetic (floor division
# and Python remainder of negative values, a clamp by where), as a model returns indices.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, ids):
        bucket = (ids * 31 + 17) // 4 % 1000
        return torch.where(ids < 0, -bucket, bucket)


def get_inputs():
    return [torch.randint(-(2 ** 40), 2 ** 40, (64, 512))]


def get_init_inputs():
    return []
