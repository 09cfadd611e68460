import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ct = nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1)
        self.bn = nn.BatchNorm2d(16)
    def forward(self, x):
        return self.bn(F.softplus(self.ct(x)))
def get_inputs():
    return [torch.randn(16, 32, 32, 32)]
def get_init_inputs():
    return []
