# torch.mm in fp16 with a long K (fp16 matmul on the CPU is slow: the reference problem is modest).
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.mm(a, b)


M, K, N = 512, 1024, 512


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs():
    return []
