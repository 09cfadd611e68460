import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__(); self.p = nn.MaxPool3d(kernel_size=3, stride=2, padding=1, dilation=3, return_indices=False, ceil_mode=False)
    def forward(self, x):
        return self.p(x)
def get_inputs(): return [torch.randn(8, 16, 32, 32, 32)]
def get_init_inputs(): return []
