# Grouped-query attention as Llama's code writes it, in bf16: 16 query heads share 4 key/value
# heads through repeat_interleave, causal SDPA, the heads merged back and projected. 2 x 1024
# tokens, head dim 128. The flash kernel reads each key/value head once for its group, in place in
# the projections' outputs (no repeated copy).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, heads, kv_heads):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, dim // heads
        self.wq = nn.Linear(dim, dim, bias=False, dtype=torch.bfloat16)
        self.wk = nn.Linear(dim, kv_heads * self.hd, bias=False, dtype=torch.bfloat16)
        self.wv = nn.Linear(dim, kv_heads * self.hd, bias=False, dtype=torch.bfloat16)
        self.wo = nn.Linear(dim, dim, bias=False, dtype=torch.bfloat16)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.heads, self.hd).transpose(1, 2)
        k = self.wk(x).view(B, T, self.kv_heads, self.hd).transpose(1, 2)
        v = self.wv(x).view(B, T, self.kv_heads, self.hd).transpose(1, 2)
        rep = self.heads // self.kv_heads
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(B, T, -1))


def get_inputs():
    return [torch.randn(2, 1024, 2048, dtype=torch.bfloat16)]


def get_init_inputs():
    return [2048, 16, 4]
