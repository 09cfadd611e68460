import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.matmul = nn.Linear(512, 1024); self.bias = nn.Parameter(torch.randn(1024) * 0.02)
        self.gn = nn.GroupNorm(32, 1024)
    def forward(self, x):
        x = self.matmul(x); x = torch.sigmoid(x) * x; x = x + self.bias
        return self.gn(x)
def get_inputs(): return [torch.randn(128, 512)]
def get_init_inputs(): return []
