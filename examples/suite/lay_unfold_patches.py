# Layout: a vision transformer's patches cut by unfold (two sliding windows, then a reshape of the
# non-contiguous view), plus a position embedding.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, patch, channels, image):
        super().__init__()
        self.p = patch
        n = (image // patch) ** 2
        self.pos = nn.Parameter(torch.randn(1, n, patch * patch * channels))

    def forward(self, img):
        p = self.p
        x = img.unfold(2, p, p).unfold(3, p, p).reshape(img.shape[0], -1, p * p * img.shape[1])
        return x + self.pos


def get_inputs():
    return [torch.randn(32, 3, 224, 224)]


def get_init_inputs():
    return [16, 3, 224]
