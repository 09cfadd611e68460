import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__(); self.c = nn.Conv3d(3, 64, (3, 3, 1), bias=False)
    def forward(self, x):
        return self.c(x)
def get_inputs(): return [torch.randn(8, 3, 64, 64, 16)]
def get_init_inputs(): return []
