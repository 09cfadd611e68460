# The microbenchmarks' PyTorch-side cold timing, as bench/micro/timing.h measures the CUDA side:
# the L2 flushed by filling 256 MiB before each trial, CUDA events around one call of `f`, the
# median of 30 timed calls after 3 untimed ones.
import torch

_flush = None


def cold_ms(f, warmups=3, trials=30):
    global _flush
    if _flush is None:
        _flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    ts = []
    for i in range(warmups + trials):
        _flush.fill_(i)
        a, z = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record()
        f()
        z.record()
        z.synchronize()
        if i >= warmups:
            ts.append(a.elapsed_time(z))
    ts.sort()
    return ts[len(ts) // 2]
