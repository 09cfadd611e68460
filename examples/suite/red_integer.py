# Integer reductions as model code writes them, exact in int64 (PyTorch's integer results): token
# counts of an attention mask, position ids as a running count of the mask (HF-style), the largest
# id per row, the running sum of ids (past 2^24, where a float sum is no longer exact), the arg max
# of int32 scores and the sum of every id (past 2^32).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, ids, scores):
        mask = ids != 0
        lengths = mask.sum(dim=1)
        positions = torch.cumsum(mask, dim=1) * mask + 1
        top = ids.amax(dim=1)
        running = torch.cumsum(ids, dim=1)
        best = scores.argmax(dim=1)
        total = ids.sum()
        return lengths, positions, top, running, best, total


def get_inputs():
    ids = torch.randint(1, 50000, (64, 2048))
    ids = torch.where(torch.rand(64, 2048) < 0.2, torch.zeros_like(ids), ids)
    return [ids, torch.randint(-1000, 1000, (64, 2048), dtype=torch.int32)]


def get_init_inputs():
    return []
