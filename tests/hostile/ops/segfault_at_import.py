# exit: 1
# message: ended abruptly (killed by signal 11 (SIGSEGV))
import torch
import torch.nn as nn
import ctypes
ctypes.string_at(0)
