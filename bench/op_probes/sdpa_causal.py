import torch, torch.nn as nn, torch.nn.functional as F
class Model(nn.Module):
    def forward(self, *xs):
        x = xs[0]
        return F.scaled_dot_product_attention(x, xs[1], xs[2], is_causal=True)
def get_inputs(): return [torch.randn(4, 8, 256, 64), torch.randn(4, 8, 256, 64), torch.randn(4, 8, 256, 64)]
def get_init_inputs(): return []
