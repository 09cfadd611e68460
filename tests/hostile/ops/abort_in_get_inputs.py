# exit: 1
# message: ended abruptly (killed by signal 6 (SIGABRT))
import torch
import torch.nn as nn
import os


class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    os.abort()
