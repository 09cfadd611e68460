import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def forward(self, *xs):
        x = xs[0]
        return torch.xlogy(x, x + 1)
def get_inputs(): return [torch.rand(256, 1000)]
def get_init_inputs(): return []
