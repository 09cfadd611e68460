import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__(); self.c = nn.ConvTranspose3d(16, 32, 3, stride=2, padding=1); self.min_value = -1.0; self.divisor = 2.0
    def forward(self, x):
        x = self.c(x); x = torch.clamp(x, min=self.min_value)
        return x / self.divisor
def get_inputs(): return [torch.randn(4, 16, 8, 16, 16)]
def get_init_inputs(): return []
