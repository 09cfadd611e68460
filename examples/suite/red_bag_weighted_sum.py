# F.embedding_bag with a weight per entry (mode="sum") and include_last_offset=True (the offsets
# end with the number of indices), as weighted feature lookups write it.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, table, ids, offsets, weights):
        return F.embedding_bag(ids, table, offsets, mode="sum", per_sample_weights=weights,
                               include_last_offset=True)


def get_inputs():
    ids = torch.randint(0, 20000, (16384,))
    starts = torch.sort(torch.randint(0, 16384, (511,))).values
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), starts, torch.tensor([16384])])
    return [torch.randn(20000, 64), ids, offsets, torch.rand(16384)]


def get_init_inputs():
    return []
