import torch, torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gemm = nn.Linear(512, 1024); self.bn = nn.BatchNorm1d(1024, eps=1e-5, momentum=0.1)
        self.scale = nn.Parameter(torch.ones((1,))); self.softmax = nn.Softmax(dim=1)
    def forward(self, x):
        x = self.gemm(x); x = self.bn(x); x = self.scale * x
        return self.softmax(x)
def get_inputs(): return [torch.randn(128, 512)]
def get_init_inputs(): return []
