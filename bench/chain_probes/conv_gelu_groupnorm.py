import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 64, 3)
        self.gn = nn.GroupNorm(8, 64)
    def forward(self, x):
        return self.gn(F.gelu(self.conv(x)))
def get_inputs():
    return [torch.randn(32, 16, 34, 34)]
def get_init_inputs():
    return []
