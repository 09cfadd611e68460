import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(128, 512)
        self.bn = nn.BatchNorm1d(512)
    def forward(self, x):
        return F.hardswish(self.bn(self.fc(x)))
def get_inputs():
    return [torch.randn(64, 128)]
def get_init_inputs():
    return []
