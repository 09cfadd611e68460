import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 64)
        self.fc = nn.Linear(64, 128)
    def forward(self, idx):
        return self.fc(self.emb(idx))
def get_inputs():
    return [torch.randint(0, 1000, (32, 16))]
def get_init_inputs():
    return []
