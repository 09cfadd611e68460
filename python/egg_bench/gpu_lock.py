"""The GPU timing lock shared with egg-harness (harness/gpu_lock.h): flock(2) on one file per
machine, held only while timing, so processes that run side by side never time at once.

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


@contextlib.contextmanager
def gpu_timing_lock(waited=None):
    """Holds the lock for the with-block; `waited` (a dict) gets the seconds spent waiting."""
    path = lock_path()
    fd = None
    if path:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as e:
            print("egg: warning: cannot open the GPU lock %s: %s (set EGG_GPU_LOCK to a writable "
                  "file, or to off)" % (path, e), file=sys.stderr)
    t0 = time.perf_counter()
    if fd is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)
    if waited is not None:
        waited["lock_wait_s"] = waited.get("lock_wait_s", 0.0) + time.perf_counter() - t0
    try:
        yield
    finally:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
