import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ct = nn.ConvTranspose3d(16, 32, 3, stride=2, padding=1, output_padding=1)
        self.gn = nn.GroupNorm(4, 32)
    def forward(self, x):
        return self.gn(torch.relu(self.ct(x)))
def get_inputs():
    return [torch.randn(2, 16, 8, 16, 16)]
def get_init_inputs():
    return []
