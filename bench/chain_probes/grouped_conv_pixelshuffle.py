import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 64, 3, padding=1, groups=4)
        self.ps = nn.PixelShuffle(2)
    def forward(self, x):
        return torch.relu(self.ps(self.conv(x)))
def get_inputs():
    return [torch.randn(8, 16, 32, 32)]
def get_init_inputs():
    return []
