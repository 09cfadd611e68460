"""egg_bench's quiet locks (the same files and flock(2) as base/gpu_lock.h): timed spans exclusive,
CPU and untimed GPU work shared, timed spans first; CPU work beside the harness's device-timed
trials, which hold the GPU lock alone."""
import fcntl
import os
import tempfile
import threading
import time
import unittest
from unittest import mock

from egg_bench.gpu_lock import cpu_work_lock, gpu_timing_lock, gpu_work_lock, lock_path


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

    def test_cpu_work_shares_and_a_timed_span_waits_for_it_first(self):
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.dict(os.environ, {"EGG_GPU_LOCK": os.path.join(tmp, "gpu.lock")}):
            order = []
            lock = threading.Lock()

            def log(what):
                with lock:
                    order.append(what)

            def timed():
                with gpu_timing_lock():
                    log("timed")

            def late_cpu_work():
                with cpu_work_lock():
                    log("late cpu work")

            with cpu_work_lock():
                with cpu_work_lock():  # shared: a second holder does not wait
                    log("two cpu holders")
                t = threading.Thread(target=timed)
                t.start()
                time.sleep(0.2)  # the timed span now waits, holding the gate
                late = threading.Thread(target=late_cpu_work)
                late.start()
                time.sleep(0.2)
                log("first cpu work done")
            t.join()
            late.join()
            # The timed span ran after the running CPU work and before the one that came later.
            self.assertEqual(order, ["two cpu holders", "first cpu work done", "timed", "late cpu work"])

    def test_cpu_work_waits_for_a_timed_span(self):
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.dict(os.environ, {"EGG_GPU_LOCK": os.path.join(tmp, "gpu.lock")}):
            order, waited = [], {}

            def cpu():
                with cpu_work_lock(waited):
                    order.append("cpu")

            with gpu_timing_lock():
                t = threading.Thread(target=cpu)
                t.start()
                time.sleep(0.2)
                order.append("timed done")
            t.join()
            self.assertEqual(order, ["timed done", "cpu"])
            self.assertGreater(waited["lock_wait_s"], 0.1)

    def test_gpu_work_shares_with_cpu_work_and_waits_for_a_timed_span(self):
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.dict(os.environ, {"EGG_GPU_LOCK": os.path.join(tmp, "gpu.lock")}):
            order, waited = [], {}

            def gpu():
                with gpu_work_lock(waited):
                    order.append("gpu work")

            with cpu_work_lock():
                with gpu_work_lock():  # shared with CPU work: no wait
                    order.append("beside cpu work")
            with gpu_timing_lock():
                t = threading.Thread(target=gpu)
                t.start()
                time.sleep(0.2)
                order.append("timed done")
            t.join()
            self.assertEqual(order, ["beside cpu work", "timed done", "gpu work"])
            self.assertGreater(waited["lock_wait_s"], 0.1)

    def test_cpu_work_goes_on_beside_a_device_timed_span(self):
        # egg-harness's trials hold the GPU lock alone, exclusively (base/gpu_lock.h).
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.dict(os.environ, {"EGG_GPU_LOCK": os.path.join(tmp, "gpu.lock")}):
            fd = os.open(lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                waited, done = {}, threading.Event()

                def cpu():
                    with cpu_work_lock(waited):
                        done.set()

                t = threading.Thread(target=cpu)
                t.start()
                self.assertTrue(done.wait(2.0), "CPU work waited for a device-timed span")
                t.join()
                blocked = threading.Event()

                def gpu():
                    with gpu_work_lock():
                        blocked.set()

                g = threading.Thread(target=gpu)
                g.start()
                self.assertFalse(blocked.wait(0.2), "GPU work ran during a device-timed span")
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
            g.join()
            self.assertTrue(blocked.is_set())

    def test_off_does_not_lock(self):
        with mock.patch.dict(os.environ, {"EGG_GPU_LOCK": "off"}):
            with gpu_timing_lock():
                with gpu_timing_lock():  # would deadlock if it locked
                    with cpu_work_lock():
                        pass


if __name__ == "__main__":
    unittest.main()
