import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__(); self.c = nn.ConvTranspose2d(32, 64, (3, 5), stride=1, padding=0, output_padding=0, groups=1, bias=False)
    def forward(self, x):
        return self.c(x)
def get_inputs(): return [torch.randn(8, 32, 64, 64)]
def get_init_inputs(): return []
