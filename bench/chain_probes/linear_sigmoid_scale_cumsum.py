import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(128, 256)
    def forward(self, x):
        return torch.cumsum(torch.sigmoid(self.fc(x)) * 2.0, dim=1)
def get_inputs():
    return [torch.randn(64, 128)]
def get_init_inputs():
    return []
