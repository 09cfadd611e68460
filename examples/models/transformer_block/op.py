"""A pre-norm transformer block: LayerNorm, causal self-attention through
F.scaled_dot_product_attention, a residual, LayerNorm, a GELU MLP and a residual."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.fc = nn.Linear(n_embd, 4 * n_embd)
        self.fc_out = nn.Linear(4 * n_embd, n_embd)
        self.n_head = n_head

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln_1(x)).chunk(3, dim=-1)
        q = q.reshape(B, T, self.n_head, C // self.n_head).permute(0, 2, 1, 3)
        k = k.reshape(B, T, self.n_head, C // self.n_head).permute(0, 2, 1, 3)
        v = v.reshape(B, T, self.n_head, C // self.n_head).permute(0, 2, 1, 3)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
        return x + self.fc_out(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


def get_inputs():
    return [torch.randn(2, 128, 256)]  # (batch, sequence, embedding)


def get_init_inputs():
    return [256, 8]
