import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.ConvTranspose3d(16, 32, 3, stride=2, padding=1); self.bn = nn.BatchNorm3d(32)
    def forward(self, x):
        x = self.c(x); x = self.bn(x)
        return x - torch.mean(x, dim=(2, 3, 4), keepdim=True)
def get_inputs(): return [torch.randn(4, 16, 8, 16, 16)]
def get_init_inputs(): return []
