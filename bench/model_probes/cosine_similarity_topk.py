"""Retrieval: cosine similarity of queries against a key bank, the top 10 scores per query."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, q, keys):
        sim = F.cosine_similarity(q.unsqueeze(1), keys.unsqueeze(0), dim=-1)
        return torch.topk(sim, 10, dim=1).values


def get_inputs():
    return [torch.randn(512, 256), torch.randn(4096, 256)]


def get_init_inputs():
    return []
