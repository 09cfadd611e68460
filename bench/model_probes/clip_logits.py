"""A CLIP-style head: project two embeddings, L2-normalize them, scaled cosine-similarity logits."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, di, dt, d):
        super().__init__()
        self.pi = nn.Linear(di, d, bias=False)
        self.pt = nn.Linear(dt, d, bias=False)
        self.logit_scale = nn.Parameter(torch.tensor(2.6592))

    def forward(self, img, txt):
        a = F.normalize(self.pi(img), dim=-1)
        b = F.normalize(self.pt(txt), dim=-1)
        return self.logit_scale.exp() * a @ b.t()


def get_inputs():
    return [torch.randn(1024, 768), torch.randn(2048, 512)]


def get_init_inputs():
    return [768, 512, 512]
