import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__(); self.conv = nn.Conv3d(3, 16, 3); self.bias = nn.Parameter(torch.randn(16, 1, 1, 1))
    def forward(self, x):
        x = self.conv(x); x = torch.relu(x); x = torch.nn.functional.leaky_relu(x, negative_slope=0.01)
        x = torch.nn.functional.gelu(x); x = torch.sigmoid(x)
        return x + self.bias
def get_inputs(): return [torch.randn(8, 3, 16, 32, 32)]
def get_init_inputs(): return []
