# Layout: a Swin block's window padding and cyclic shift (F.pad to a multiple of the window, a
# shifted slice pair concatenated), in channels-last tokens.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, window, shift):
        super().__init__()
        self.window = window
        self.shift = shift

    def forward(self, x):
        B, H, W, C = x.shape
        pad_b = (self.window - H % self.window) % self.window
        pad_r = (self.window - W % self.window) % self.window
        x = F.pad(x, [0, 0, 0, pad_r, 0, pad_b], "constant", 0.5)
        s = self.shift
        x = torch.cat((x[:, s:], x[:, :s]), dim=1)
        return torch.cat((x[:, :, s:], x[:, :, :s]), dim=2)


def get_inputs():
    return [torch.randn(16, 54, 54, 96)]


def get_init_inputs():
    return [7, 3]
