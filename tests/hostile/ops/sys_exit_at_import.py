# exit: 1
# message: executing op.py failed: SystemExit
import torch
import torch.nn as nn
import sys
sys.exit(4)  # <- here
