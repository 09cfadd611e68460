# The PyTorch side of bench/micro/skinny_gemm.cu: F.linear (with bias) at the same shapes, timed the
# same way (cold: L2 flushed, CUDA events, median of 30; warm: 200 back-to-back calls, their mean).
# python3 bench/micro/skinny_gemm_torch.py
import torch
import torch.nn.functional as F

fl = torch.empty(256 << 20, dtype=torch.uint8, device='cuda')


def cold(f):
    ts = []
    for i in range(31):
        fl.fill_(i)
        a = torch.cuda.Event(True)
        z = torch.cuda.Event(True)
        a.record()
        f()
        z.record()
        z.synchronize()
        if i:
            ts.append(a.elapsed_time(z))
    ts.sort()
    return ts[len(ts) // 2]


def warm(f):
    f()
    a = torch.cuda.Event(True)
    z = torch.cuda.Event(True)
    a.record()
    for _ in range(200):
        f()
    z.record()
    z.synchronize()
    return a.elapsed_time(z) / 200


with torch.inference_mode():
    for m, n, k in [(8, 256, 1280), (8, 128, 256), (1, 4096, 4096), (4, 11008, 4096),
                    (16, 4096, 4096), (8, 1000, 2048)]:
        x = torch.randn(m, k, device='cuda')
        w = torch.randn(n, k, device='cuda')
        b = torch.randn(n, device='cuda')
        f = lambda: F.linear(x, w, b)
        print('%d x %d x %d  F.linear  cold %.2f us  warm %.2f us' % (m, n, k, cold(f) * 1e3, warm(f) * 1e3))
