# A bool mask as the op's output (attention and padding masks built from lengths and scores):
# comparisons, logical ops and isnan, stored as bool.
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, scores, lengths):
        pos = torch.arange(scores.shape[1]).unsqueeze(0)
        valid = pos < lengths.unsqueeze(1)
        return valid & (scores > -1.0) | torch.isnan(scores)


def get_inputs():
    s = torch.randn(64, 300)
    s[3, 7] = float("nan")
    return [s, torch.randint(0, 300, (64,))]


def get_init_inputs():
    return []
