# Classification loss with class weights and an ignored class: log-probabilities in, the
# weighted negative log likelihood out (mean over the weights of the rows not ignored).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.register_buffer("class_weight", torch.rand(classes) + 0.5)

    def forward(self, log_probs, target):
        return F.nll_loss(log_probs, target, weight=self.class_weight, ignore_index=0)


batch, classes = 32768, 1000


def get_inputs():
    return [torch.randn(batch, classes).log_softmax(dim=1), torch.randint(0, classes, (batch,))]


def get_init_inputs():
    return [classes]
