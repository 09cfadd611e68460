import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, A, B):
        return torch.einsum("bijl,lk->bijk", A, B)
def get_inputs(): return [torch.randn(4, 64, 128, 96), torch.randn(96, 192)]
def get_init_inputs(): return []
