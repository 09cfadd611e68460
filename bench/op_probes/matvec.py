import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def forward(self, *xs):
        x = xs[0]
        return torch.mv(x, xs[1])
def get_inputs(): return [torch.randn(1024, 512), torch.randn(512)]
def get_init_inputs(): return []
