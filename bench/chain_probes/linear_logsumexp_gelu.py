import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(256, 512)
    def forward(self, x):
        return F.gelu(torch.logsumexp(self.fc(x), dim=1, keepdim=True))
def get_inputs():
    return [torch.randn(128, 256)]
def get_init_inputs():
    return []
