# scaled_dot_product_attention with enable_gqa=True in fp16: 32 query heads over 8 key/value heads,
# 4 x 512 tokens, head dim 64. Each key/value head serves its group of 4 query heads.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def get_inputs():
    q = torch.randn(4, 32, 512, 64, dtype=torch.float16)
    k = torch.randn(4, 8, 512, 64, dtype=torch.float16)
    v = torch.randn(4, 8, 512, 64, dtype=torch.float16)
    return [q, k, v]


def get_init_inputs():
    return []
