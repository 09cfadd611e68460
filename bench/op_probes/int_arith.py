import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def forward(self, *xs):
        x = xs[0]
        return (x * 3 + 7) // 2 % 5
def get_inputs(): return [torch.randint(0, 100, (4096,))]
def get_init_inputs(): return []
