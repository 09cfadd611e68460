"""The machine-wide quiet locks shared with egg-gen and egg-harness (base/gpu_lock.h): two
reader/writer locks of flock(2), one file each per machine, released by the kernel if a holder
dies.

- The GPU lock: a timed span on the GPU holds it exclusively (egg-harness's trials, ncu's replays,
  these baselines), untimed GPU work holds it shared (egg-harness's verification calls, the
  reference server's computing, a baseline's first call). No two timed spans overlap, and no
  other EGG job's kernels run during one.
- The CPU lock (<lock>.cpu): a timed span whose figure includes the host's time (these baselines:
  CUDA events around a Python call absorb every host delay) holds it exclusively as well; CPU-heavy
  work holds it shared (nvcc compiles, frontend tracing, torch.compile's default-mode compilation,
  building a model). egg-harness's trials are timed on a held stream (the launch is enqueued
  before the start event runs), so CPU work does not disturb them and goes on beside them.

Order: the CPU lock before the GPU lock, and nobody holding the GPU lock waits for the CPU lock.
Each lock waits for the shared holders already running and blocks new ones while it waits
(writer preference): both sides first take the gate file <lock>.gate exclusively, then the lock,
then let the gate go; a timed span waiting for the lock keeps the gate, so new work queues
behind it.

The file: $EGG_GPU_LOCK if set ("off" disables locking), else <tmp>/egg-gpu-<uid>.lock."""
import contextlib
import fcntl
import os
import sys
import tempfile
import time


def lock_path():
    v = os.environ.get("EGG_GPU_LOCK", "")
    if v == "off":
        return None
    return v or os.path.join(tempfile.gettempdir(), "egg-gpu-%d.lock" % os.getuid())


def gate_path(path):
    return path + ".gate"


def open_lock_file(path, what="the GPU lock", variable="EGG_GPU_LOCK"):
    """A descriptor of the lock file `path` for flock(2), or None (with a warning that names the
    variable to set) when it cannot be opened: the work then proceeds unlocked. Also used for
    the GPU memory lock (egg_frontend/gpu_memory.py)."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:
        print("egg: warning: cannot open %s %s: %s (set %s to a writable file, or to off)"
              % (what, path, e, variable), file=sys.stderr)
        return None


def cpu_lock_path(path):
    """The CPU lock's file beside the GPU lock's (base/gpu_lock.h: cpu_lock_path)."""
    return path + ".cpu"


@contextlib.contextmanager
def _rw_lock(path, mode, waited):
    fd = open_lock_file(path) if path else None
    gate = open_lock_file(gate_path(path)) if fd is not None else None
    t0 = time.perf_counter()
    if fd is not None:
        if gate is not None:
            fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(fd, mode)
        finally:
            if gate is not None:
                fcntl.flock(gate, fcntl.LOCK_UN)
                os.close(gate)
    if waited is not None:
        waited["lock_wait_s"] = waited.get("lock_wait_s", 0.0) + time.perf_counter() - t0
    try:
        yield
    finally:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _gpu(mode, waited):
    return _rw_lock(lock_path(), mode, waited)


def _cpu(mode, waited):
    path = lock_path()
    return _rw_lock(cpu_lock_path(path) if path else None, mode, waited)


@contextlib.contextmanager
def gpu_timing_lock(waited=None):
    """A timed span whose figure includes the host (egg_bench's baselines): holds the CPU lock and
    then the GPU lock exclusively for the with-block; `waited` (a dict) gets the seconds spent
    waiting."""
    with _cpu(fcntl.LOCK_EX, waited), _gpu(fcntl.LOCK_EX, waited):
        yield


def cpu_work_lock(waited=None):
    """Holds the CPU lock shared for the with-block (CPU-heavy work: never during a timed span
    that includes the host; egg-harness's device-timed trials go on beside it)."""
    return _cpu(fcntl.LOCK_SH, waited)


def gpu_work_lock(waited=None):
    """Holds the GPU lock shared for the with-block (GPU work that is not timed, such as computing
    references: never during a timed span). Take it after anything else it could wait for; never
    take the CPU lock while holding it."""
    return _gpu(fcntl.LOCK_SH, waited)
