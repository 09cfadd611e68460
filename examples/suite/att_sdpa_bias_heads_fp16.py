# Attention with an additive float bias (a learned relative-position table, as in Swin or T5) and
# head dim 40, its output merged back into [batch, tokens, heads * dim] by transpose(1, 2) and a
# reshape: 3 x 5 heads of 77 tokens.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, heads, tokens):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(heads, tokens, tokens, dtype=torch.float16))

    def forward(self, q, k, v):
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=self.bias)
        b, h, t, d = y.shape
        return y.transpose(1, 2).reshape(b, t, h * d)


def get_inputs():
    return [torch.randn(3, 5, 77, 40, dtype=torch.float16) for _ in range(3)]


def get_init_inputs():
    return [5, 77]
