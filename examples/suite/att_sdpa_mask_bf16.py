# Cross-attention in bf16 with a bool padding mask broadcast over the heads, a given scale and
# key/query lengths that are no multiple of a tile: 2 x 8 heads, 300 queries, 333 keys, head dim 128.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, q, k, v, keep):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=keep, scale=0.1)


def get_inputs():
    q = torch.randn(2, 8, 300, 128, dtype=torch.bfloat16)
    k = torch.randn(2, 8, 333, 128, dtype=torch.bfloat16)
    v = torch.randn(2, 8, 333, 128, dtype=torch.bfloat16)
    keep = torch.rand(2, 1, 300, 333) > 0.2
    keep[..., 0] = True  # every query keeps a key (a row with none is NaN in PyTorch's math)
    return [q, k, v, keep]


def get_init_inputs():
    return []
