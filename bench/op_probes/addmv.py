import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def forward(self, *xs):
        x = xs[0]
        return torch.addmv(x, xs[1], xs[2])
def get_inputs(): return [torch.randn(64), torch.randn(64, 32), torch.randn(32)]
def get_init_inputs(): return []
