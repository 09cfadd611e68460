import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(512, 1024)
        self.ln = nn.LayerNorm(1024)
        self.drop = nn.Dropout(0.1)
    def forward(self, x):
        return self.drop(torch.relu(self.ln(self.fc(x))))
def get_inputs():
    return [torch.randn(256, 512)]
def get_init_inputs():
    return []
