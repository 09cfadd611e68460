"""BERT's embeddings: token ids (int64) through a word table, plus position and token-type
embeddings, LayerNorm."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, dim, max_len):
        super().__init__()
        self.word = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.token_type = nn.Embedding(2, dim)
        self.norm = nn.LayerNorm(dim, eps=1e-12)

    def forward(self, ids, types):
        positions = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        return self.norm(self.word(ids) + self.pos(positions) + self.token_type(types))


def get_inputs():
    return [torch.randint(0, 30522, (32, 512)), torch.randint(0, 2, (32, 512))]


def get_init_inputs():
    return [30522, 768, 512]
