# nn.EmbeddingBag over bags of one length (a 2-D index tensor), as recommendation and text models
# write it: the mean of each bag's rows with a padding index left out, and a max bag.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.mean_bag = nn.EmbeddingBag(vocab, dim, mode="mean", padding_idx=0)
        self.max_bag = nn.EmbeddingBag(vocab, dim, mode="max")

    def forward(self, ids):
        return self.mean_bag(ids) + self.max_bag(ids)


def get_inputs():
    return [torch.randint(0, 5000, (1024, 20))]


def get_init_inputs():
    return [5000, 128]
