import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(5000, 128, mode="sum")
    def forward(self, idx, offsets):
        return self.bag(idx, offsets)
def get_inputs():
    idx = torch.randint(0, 5000, (4096,))
    offsets = torch.sort(torch.randint(0, 4096, (255,))).values
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), offsets])
    return [idx, offsets]
def get_init_inputs(): return []
