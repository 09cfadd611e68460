"""The machine-wide quiet lock shared with egg-gen and egg-harness (base/gpu_lock.h): a
reader/writer lock of flock(2) on one file per machine, released by the kernel if a holder dies.

- A timed span (egg-harness's trials, these baselines, ncu) holds it exclusively: no two timed
  spans overlap on the GPU, and no EGG job's CPU-heavy work runs while one does.
- Other work that would disturb one holds it shared: CPU-heavy work (nvcc compiles, frontend
  tracing, torch.compile's default-mode compilation) and GPU work (egg-harness's verification runs,
  the reference server's computing). Any number at once, never during a timed span.

A timed span waits for the shared holders already running and blocks new ones while it waits
(writer preference): both sides first take the gate file <lock>.gate exclusively, then the lock,
then let the gate go; a timed span waiting for the lock keeps the gate, so new CPU work queues
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


@contextlib.contextmanager
def _quiet_lock(mode, waited):
    path = lock_path()
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


def gpu_timing_lock(waited=None):
    """Holds the lock exclusively for the with-block (a timed span); `waited` (a dict) gets the
    seconds spent waiting."""
    return _quiet_lock(fcntl.LOCK_EX, waited)


def cpu_work_lock(waited=None):
    """Holds the lock shared for the with-block (CPU-heavy work, never during a timed span)."""
    return _quiet_lock(fcntl.LOCK_SH, waited)


def gpu_work_lock(waited=None):
    """Holds the lock shared for the with-block (GPU work that is not timed, such as computing
    references: never during a timed span). Take it after anything else it could wait for."""
    return _quiet_lock(fcntl.LOCK_SH, waited)
