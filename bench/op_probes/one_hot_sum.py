import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def forward(self, *xs):
        x = xs[0]
        return F.one_hot(x, 10).float().sum(0)
def get_inputs(): return [torch.randint(0, 10, (4096,))]
def get_init_inputs(): return []
