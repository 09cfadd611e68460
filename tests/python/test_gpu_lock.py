"""egg_bench's GPU timing lock (the same file and flock(2) as harness/gpu_lock.h)."""
import os
import tempfile
import threading
import time
import unittest
from unittest import mock

from egg_bench.gpu_lock import gpu_timing_lock, lock_path


class GpuLockTest(unittest.TestCase):
    def test_path(self):
        with mock.patch.dict(os.environ, {"EGG_GPU_LOCK": "/x/gpu.lock"}):
            self.assertEqual(lock_path(), "/x/gpu.lock")
        with mock.patch.dict(os.environ, {"EGG_GPU_LOCK": "off"}):
            self.assertIsNone(lock_path())
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(os.path.basename(lock_path()), "egg-gpu-%d.lock" % os.getuid())

    def test_second_holder_waits(self):
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.dict(os.environ, {"EGG_GPU_LOCK": os.path.join(tmp, "gpu.lock")}):
            order = []
            waited = {}

            def second():
                with gpu_timing_lock(waited):
                    order.append("second")

            with gpu_timing_lock():
                t = threading.Thread(target=second)
                t.start()
                time.sleep(0.2)
                order.append("first done")
            t.join()
            self.assertEqual(order, ["first done", "second"])
            self.assertGreater(waited["lock_wait_s"], 0.1)

    def test_off_does_not_lock(self):
        with mock.patch.dict(os.environ, {"EGG_GPU_LOCK": "off"}):
            with gpu_timing_lock():
                with gpu_timing_lock():  # would deadlock if it locked
                    pass


if __name__ == "__main__":
    unittest.main()
