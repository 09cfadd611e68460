# Layout: attention scores masked by a causal buffer sliced to the sequence length (GPT-2).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, max_seqlen):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen))
                             .view(1, 1, max_seqlen, max_seqlen))

    def forward(self, att):
        T = att.size(-1)
        return att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf')) * 0.5


def get_inputs():
    return [torch.randn(8, 12, 512, 512)]


def get_init_inputs():
    return [1024]
