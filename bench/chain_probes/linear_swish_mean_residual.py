import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(256, 256)
    def forward(self, x):
        y = self.fc(x)
        y = y * torch.sigmoid(y)
        return x + y.mean(dim=1, keepdim=True)
def get_inputs():
    return [torch.randn(128, 256)]
def get_init_inputs():
    return []
