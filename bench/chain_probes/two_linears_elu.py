import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(256, 512)
        self.fc2 = nn.Linear(512, 128)
    def forward(self, x):
        return self.fc2(F.elu(self.fc1(x)))
def get_inputs():
    return [torch.randn(128, 256)]
def get_init_inputs():
    return []
