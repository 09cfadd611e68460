# GPT-2's causal self-attention as its code writes it, in bf16: the scores q @ k^T scaled by
# 1/sqrt(head dim), masked_fill of a registered lower-triangular buffer, softmax, @ v, the heads
# merged back and projected. 4 x 512 tokens, 12 heads of 64. The written-out softmax attention is
# raised to one attention node, so the flash kernel competes with the math as written.
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_embd, n_head, max_len):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd, dtype=torch.bfloat16)
        self.c_proj = nn.Linear(n_embd, n_embd, dtype=torch.bfloat16)
        mask = torch.tril(torch.ones(max_len, max_len)).view(1, 1, max_len, max_len)
        self.register_buffer("bias", mask)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


def get_inputs():
    return [torch.randn(4, 512, 768, dtype=torch.bfloat16)]


def get_init_inputs():
    return [768, 12, 1024]
