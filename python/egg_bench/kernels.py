"""Which GPU kernels a baseline runs, and how long the GEMM library's take: the "cuBLAS at the same
precision" figure a GEMM-anchored kernel is compared with (issue 5: GEMMs at >= 90 % of cuBLAS).

kernel_times(fn) profiles fn with torch.profiler (CUDA activity, i.e. CUPTI) and returns every
device-side event's name and duration; summarize() splits them into GEMM-library kernels and the
rest. Inputs stay in L2 between the profiled calls (no flush), so the library's figure is, if
anything, optimistic: the percentage against it is a lower bound."""
import re

# Kernel names of cuBLAS/cuBLASLt/CUTLASS GEMMs on NVIDIA GPUs (sm80/sm90 families included).
GEMM_KERNEL = re.compile(r"gemm|xmma|cutlass|cublas|s16816|h16816|s1688|h1688|hmma|wgmma|"
                         r"sm90_|sm80_|ampere_|Kernel2", re.IGNORECASE)


def summarize(events, calls):
    """events: [(name, microseconds)] of device-side work over `calls` calls of the function.
    Returns milliseconds per call: all device work, the GEMM library's kernels, and their names."""
    calls = max(int(calls), 1)
    total = sum(us for _, us in events)
    gemm = [(n, us) for n, us in events if GEMM_KERNEL.search(n)]
    names = sorted({n for n, _ in gemm})
    return {"calls": calls,
            "device_ms": total / 1000.0 / calls,
            "gemm_library_ms": sum(us for _, us in gemm) / 1000.0 / calls,
            "gemm_kernels": names[:8],
            "kernels": per_kernel(events, calls)}


def per_kernel(events, calls, limit=12):
    """Where a call's device time goes: [{"name", "ms"}] per call, one entry per kernel name in
    the order each first ran, the `limit` longest kept (names cut at 160 characters)."""
    order, ms = [], {}
    for name, us in events:
        if name not in ms:
            order.append(name)
            ms[name] = 0.0
        ms[name] += us / 1000.0 / calls
    kept = set(sorted(order, key=lambda n: -ms[n])[:limit])
    return [{"name": n if len(n) <= 160 else n[:157] + "...", "ms": ms[n]} for n in order if n in kept]


def kernel_times(fn, calls=20):
    """[(name, microseconds)] of every CUDA device event while fn runs `calls` times."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    out = []
    for e in prof.events():
        if getattr(e, "device_type", None) == DeviceType.CUDA:
            out.append((e.name, e.time_range.elapsed_us()))
    return out
