"""Admission to GPU memory shared by every EGG process on the machine (harness/gpu_memory.h).

Reference servers and egg-harness take one machine-wide ``flock(2)`` while they check free GPU
memory and allocate, and wait (polling) while the GPU has too little free for what they need: a
generation waits for memory another job holds, it never fails for it.

The file: $EGG_GPU_MEM_LOCK if set ("off" disables it), else <tmp>/egg-gpu-mem-<uid>.lock.
"""
import contextlib
import fcntl
import os
import tempfile
import time

from egg_bench.gpu_lock import open_lock_file

MARGIN_BYTES = 512 << 20  # left free for contexts, cuBLAS/cuDNN workspaces and fragmentation
POLL_S = 0.25
_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int64": 8, "int32": 4,
                "int8": 1, "uint8": 1, "bool": 1}


def decl_bytes(d):
    """Bytes of one spec declaration (docs/SPEC.md: an input, output, param or node)."""
    n = 1
    for s in d.get("shape") or []:  # a node without one (a tuple result) counts as a scalar
        n *= s if isinstance(s, int) else 1
    return n * _DTYPE_BYTES.get(d.get("dtype"), 4)


def set_need_bytes(spec_doc):
    """GPU memory one forward on one input set needs while it runs, from the spec before anything
    is computed: the inputs and their copy, the outputs, and the largest intermediate twice
    (parameters not included)."""
    ins = sum(decl_bytes(d) for d in spec_doc["inputs"])
    outs = sum(decl_bytes(d) for d in spec_doc["outputs"])
    widest = max([decl_bytes(n) for n in spec_doc.get("nodes", [])] + [0])
    return 2 * ins + outs + 2 * widest


def lock_path():
    v = os.environ.get("EGG_GPU_MEM_LOCK", "")
    if v == "off":
        return None
    return v or os.path.join(tempfile.gettempdir(), "egg-gpu-mem-%d.lock" % os.getuid())


@contextlib.contextmanager
def admission(torch, need_bytes, waited, max_wait_s=3600.0):
    """Holds the memory lock once ``need_bytes`` (+ a margin) are free on the current device.

    ``waited`` (a dict) gets ``wait_s``: seconds spent waiting for the lock or for memory.
    Raises RuntimeError after ``max_wait_s`` (the GPU never had room: the op is too large)."""
    total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
    if need_bytes + MARGIN_BYTES > total:
        raise RuntimeError("the op needs %.1f GB of GPU memory for one reference set, more than "
                           "the GPU's %.1f GB" % (need_bytes / 1e9, total / 1e9))
    path = lock_path()
    fd = open_lock_file(path, "the GPU memory lock", "EGG_GPU_MEM_LOCK") if path else None
    t0 = time.perf_counter()
    try:
        while True:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            free, _ = torch.cuda.mem_get_info()
            # Memory this process's allocator already caches is free for it too.
            free += torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
            if free >= need_bytes + MARGIN_BYTES:
                break
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
            torch.cuda.empty_cache()  # what this process caches may be what another job waits for
            if time.perf_counter() - t0 > max_wait_s:
                raise RuntimeError("waited %.0f s for %.1f GB of free GPU memory"
                                   % (max_wait_s, need_bytes / 1e9))
            time.sleep(POLL_S)
        waited["wait_s"] = waited.get("wait_s", 0.0) + time.perf_counter() - t0
        yield
    finally:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
