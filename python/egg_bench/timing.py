"""GPU timing with the harness's method (harness/verify.cpp, time_candidate)."""
import time

import torch


def l2_flush_buffer(device=None):
    """A buffer of twice the GPU's L2 (at least 16 MiB); zeroing it evicts everything else."""
    props = torch.cuda.get_device_properties(device)
    l2 = getattr(props, "L2_cache_size", 0) or (50 << 20)
    nbytes = max(2 * l2, 16 << 20)
    return torch.empty(nbytes // 4, dtype=torch.int32, device=device)


def percentile(sorted_values, q):
    """Linear interpolation, as summarize() in harness/tolerance.cpp."""
    if not sorted_values:
        return 0.0
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def sleep_cycles_per_ms():
    """GPU clock cycles per millisecond of torch.cuda._sleep, measured with CUDA events."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    cycles = 10_000_000
    start.record()
    torch.cuda._sleep(cycles)
    stop.record()
    stop.synchronize()
    return cycles / max(start.elapsed_time(stop), 1e-3)


def bench(fn, warmups=3, min_trials=100, min_time_s=0.5, max_time_s=30.0, lead_ms=0.0):
    """Times fn() with CUDA events around each call, the L2 flushed before each trial and a
    device-wide synchronize after it. Returns a dict of milliseconds.

    lead_ms > 0: the GPU sleeps that long before each trial's start event, so fn's host work
    (Python, dispatch, guards) is done while the GPU waits and the events time the GPU's work
    alone (device time, as a CUDA graph replay would give), whatever else loads the CPU."""
    flush = l2_flush_buffer()
    lead_cycles = int(lead_ms * sleep_cycles_per_ms()) if lead_ms > 0 else 0
    for _ in range(warmups):
        flush.zero_()
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    t0 = time.perf_counter()
    while True:
        flush.zero_()  # keeps the GPU busy while the host enqueues fn's kernels
        if lead_cycles:
            torch.cuda._sleep(lead_cycles)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()  # device-wide: work on other streams ends inside the trial
        times.append(start.elapsed_time(stop))
        wall = time.perf_counter() - t0
        if (len(times) >= min_trials and wall >= min_time_s) or len(times) >= 100000 or (wall >= max_time_s and len(times) >= 3):
            break
    s = sorted(times)
    return {"median_ms": percentile(s, 0.5), "p10_ms": percentile(s, 0.1), "p90_ms": percentile(s, 0.9),
            "trials": len(times), "warmups": warmups, "l2_flush_bytes": flush.numel() * 4,
            "lead_ms": lead_ms}
