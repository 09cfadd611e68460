# torch.mm in fp16 with a long K: [1024, 4096] x [4096, 1024].
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.mm(a, b)


M, K, N = 1024, 4096, 1024


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs():
    return []
