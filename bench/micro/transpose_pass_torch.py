# The PyTorch side of bench/micro/transpose_pass.cu: torch.compile's own transposing pass for the
# same problem (level2/5's channels-last result [32, 64, 513, 513] back to NCHW through
# tanh(x + cb - b)), timed the same way (L2 flushed, CUDA events, median of 30), and the Triton
# source Inductor wrote for it, with the tile configuration its autotuning kept. Then the input's
# transpose to channels-last before the convolution ([32, 64, 256, 256], the microbenchmark's swap),
# as torch.compile's copy and as eager's.
#
#   TORCHINDUCTOR_CACHE_DIR=/tmp/ic python3 bench/micro/transpose_pass_torch.py [folder for sources]
import glob
import os
import shutil
import sys

import torch

from cold_timing import cold_ms

N, C, H = 32, 64, 513
torch.manual_seed(0)
# Random data as the CUDA side's second half (about N(0, 1.5²)): tanh's branches depend on it.
y = (1.5 * torch.randn(N, C, H, H, device="cuda")).contiguous(memory_format=torch.channels_last)
cb = 0.1 * torch.randn(C, device="cuda")
b = 0.1 * torch.randn(C, 1, 1, device="cuda")


def pass_(y):
    return torch.tanh(y + cb.view(1, C, 1, 1) - b).contiguous()


with torch.inference_mode():
    copy = cold_ms(lambda: y.clone(memory_format=torch.channels_last))
    gb = y.numel() * 8 / 1e6
    print("copy (clone)                    %.4f ms  %.0f GB/s" % (copy, gb / copy))
    compiled = torch.compile(pass_)
    out = compiled(y)
    assert out.is_contiguous()
    ms = cold_ms(lambda: compiled(y))
    print("torch.compile pass              %.4f ms  %.0f GB/s" % (ms, gb / ms))
    ms = cold_ms(lambda: pass_(y))
    print("eager pass                      %.4f ms  %.0f GB/s" % (ms, gb / ms))
    x = torch.zeros(N, C, 256, 256, device="cuda")
    gb = x.numel() * 8 / 1e6

    def to_last(x):
        return x.contiguous(memory_format=torch.channels_last)

    compiled = torch.compile(to_last)
    assert compiled(x).is_contiguous(memory_format=torch.channels_last)
    ms = cold_ms(lambda: compiled(x))
    print("torch.compile swap to NHWC      %.4f ms  %.0f GB/s" % (ms, gb / ms))
    ms = cold_ms(lambda: to_last(x))
    print("eager swap to NHWC              %.4f ms  %.0f GB/s" % (ms, gb / ms))
if len(sys.argv) > 1 and os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
    os.makedirs(sys.argv[1], exist_ok=True)
    root = os.environ["TORCHINDUCTOR_CACHE_DIR"]
    for f in glob.glob(root + "/**/*.py", recursive=True) + glob.glob(root + "/**/*.best_config", recursive=True):
        shutil.copy(f, sys.argv[1])
