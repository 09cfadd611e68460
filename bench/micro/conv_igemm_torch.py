# The PyTorch side of bench/micro/conv_igemm.cu: the same convolutions with bias and tanh, eager
# and torch.compile (default mode), and the convolution alone, timed the same way (L2 flushed,
# CUDA events, median of 30), cuDNN's fp32 convolutions in TF32 as PyTorch's default.
#
#   python3 bench/micro/conv_igemm_torch.py
import torch
import torch.nn.functional as F

from cold_timing import cold_ms


def block(x, w, b, pad):
    return torch.tanh(F.conv2d(x, w, b, padding=pad))


SHAPES = [  # name, N, C, K, H, pad (3x3, stride 1): conv_igemm.cu's
    ("N64 C64 K128 256^2", 64, 64, 128, 256, 0),
    ("N64 C64 K64 256^2", 64, 64, 64, 256, 0),
    ("N128 C64 K128 128^2", 128, 64, 128, 128, 0),
    ("N128 C8 K64 128^2", 128, 8, 64, 128, 0),
    ("N32 C128 K128 56^2 p1", 32, 128, 128, 56, 1),
]
with torch.inference_mode():
    print("cudnn.allow_tf32 =", torch.backends.cudnn.allow_tf32)
    for name, n, c, k, h, pad in SHAPES:
        x = torch.randn(n, c, h, h, device="cuda")
        w = torch.randn(k, c, 3, 3, device="cuda") / (9 * c) ** 0.5
        b = torch.randn(k, device="cuda") * 0.1
        oh = h + 2 * pad - 2
        tflop = 2.0 * n * oh * oh * k * c * 9 / 1e9
        conv = cold_ms(lambda: F.conv2d(x, w, b, padding=pad))
        eager = cold_ms(lambda: block(x, w, b, pad))
        compiled = torch.compile(block)
        compiled(x, w, b, pad)
        comp = cold_ms(lambda: compiled(x, w, b, pad))
        print("%-22s conv alone %8.4f ms (%5.1f TFLOP/s)  eager conv+tanh %8.4f ms  "
              "torch.compile %8.4f ms" % (name, conv, tflop / conv, eager, comp))
        del x
        torch.cuda.empty_cache()
