import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self, dim):
        super().__init__(); self.dim = dim
    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=self.dim)
def get_inputs(): return [torch.randn(128, 4000), torch.randint(0, 2, (128, 4000)).bool()]
def get_init_inputs(): return [1]
