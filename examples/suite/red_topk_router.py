# A mixture-of-experts router: softmax over the experts, then each token's top 2 experts (their
# weights and indices).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, logits):
        weights, experts = torch.topk(torch.softmax(logits, dim=-1), self.k, dim=-1)
        return weights, experts


tokens, experts = 32768, 64


def get_inputs():
    return [torch.randn(tokens, experts)]


def get_init_inputs():
    return [2]
