# nn.EmbeddingBag over bags of varying length, as recommendation models call it: 1-D indices and
# the offsets where each bag starts (some bags empty), the mean of each bag's rows with the padding
# row left out.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, dim, mode="mean", padding_idx=0)

    def forward(self, ids, offsets):
        return self.bag(ids, offsets)


def get_inputs():
    ids = torch.randint(0, 5000, (8192,))
    ids = torch.where(torch.rand(8192) < 0.1, torch.zeros_like(ids), ids)
    starts = torch.sort(torch.randint(0, 8192, (1023,))).values
    return [ids, torch.cat([torch.zeros(1, dtype=torch.long), starts])]


def get_init_inputs():
    return [5000, 128]
