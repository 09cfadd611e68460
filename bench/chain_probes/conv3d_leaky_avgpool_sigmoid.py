import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(8, 16, 3, padding=1)
        self.pool = nn.AvgPool3d(2)
    def forward(self, x):
        return torch.sigmoid(self.pool(F.leaky_relu(self.conv(x), 0.2)))
def get_inputs():
    return [torch.randn(4, 8, 16, 32, 32)]
def get_init_inputs():
    return []
