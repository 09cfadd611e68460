import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def forward(self, *xs):
        x = xs[0]
        return torch.baddbmm(x, xs[1], xs[2], beta=0.5, alpha=2.0)
def get_inputs(): return [torch.randn(8, 64, 48), torch.randn(8, 64, 32), torch.randn(8, 32, 48)]
def get_init_inputs(): return []
