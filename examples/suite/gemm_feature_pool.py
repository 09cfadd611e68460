# A linear layer whose output features are average-pooled in groups of 8 right away (a 3-D input,
# the pool over the last dim): each pooled feature is x . mean(W's 8 rows) + mean(8 biases), so
# EGG measures a product with 8x fewer features on W's rows averaged first beside the GEMM and
# its pool; torch.compile and eager run the full GEMM.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features, out_features, group):
        super().__init__()
        self.proj = nn.Linear(in_features, out_features)
        self.group = group

    def forward(self, x):
        y = self.proj(x) / 0.5
        return torch.relu(F.avg_pool1d(y, self.group))


def get_inputs():
    return [torch.randn(8, 256, 2048)]


def get_init_inputs():
    return [2048, 4096, 8]
