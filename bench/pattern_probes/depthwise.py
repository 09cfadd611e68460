import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__(); self.c = nn.Conv2d(64, 64, 3, stride=1, padding=0, groups=64, bias=False)
    def forward(self, x):
        return self.c(x)
def get_inputs(): return [torch.randn(16, 64, 128, 128)]
def get_init_inputs(): return []
