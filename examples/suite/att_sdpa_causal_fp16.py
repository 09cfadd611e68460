# Causal self-attention through F.scaled_dot_product_attention in fp16: 4 x 16 heads of 1024 tokens,
# head dim 64 (GPT-2 medium's heads). The attention family's flash kernel against the math
# (matmul, softmax, matmul) PyTorch's reference path computes.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(4, 16, 1024, 64, dtype=torch.float16) for _ in range(3)]


def get_init_inputs():
    return []
