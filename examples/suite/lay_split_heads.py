# Layout: a fused QKV projection's output split into heads (split, view, transpose), q scaled.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_embd = n_embd
        self.n_head = n_head

    def forward(self, qkv):
        B, T, _ = qkv.shape
        q, k, v = qkv.split(self.n_embd, dim=2)
        heads = lambda t: t.view(B, T, self.n_head, self.n_embd // self.n_head).transpose(1, 2)
        return heads(q) * 0.125, heads(k).transpose(-2, -1), heads(v)


def get_inputs():
    return [torch.randn(8, 512, 3 * 768)]


def get_init_inputs():
    return [768, 12]
