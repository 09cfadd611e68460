# exit: 1
# message: executing op.py failed: RuntimeError: boom
import torch
import torch.nn as nn
raise RuntimeError('boom')  # <- here
