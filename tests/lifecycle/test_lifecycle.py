"""egg-gen as a process: what a kill, a slow op.py and a hostile environment do to it.

Every test runs the real egg-gen with its own TMPDIR, so what it leaves behind can be listed.
Arguments come from the environment (tests/lifecycle/CMakeLists.txt): EGG_GEN, EGG_DATA_DIR,
EGG_TEST_PYTHON, EGG_TEST_NVCC (empty when there is no nvcc).
"""
import os
import re
import signal
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

EGG_GEN = os.environ["EGG_GEN"]
PYTHON = os.environ["EGG_TEST_PYTHON"]
NVCC = os.environ.get("EGG_TEST_NVCC", "")
if NVCC.endswith("NOTFOUND"):
    NVCC = ""

GOOD_OP = """import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0
def get_inputs(): return [torch.randn(1024)]
def get_init_inputs(): return []
"""

# An op.py that writes its pid, then spins (or sleeps) for as long as it is let.
SPIN_OP = """import os, pathlib, time
pathlib.Path(__file__).with_name("frontend.pid").write_text(str(os.getpid()))
while True:
    {body}
"""


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return ") Z" not in Path("/proc/%d/stat" % pid).read_text()  # a zombie is dead
    except OSError:
        return False


def dies(pid, within=15.0):
    """True once `pid` is dead; a SIGKILLed process on a loaded machine dies when it is next run."""
    deadline = time.time() + within
    while time.time() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


class Lifecycle(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="egg-lifecycle-")
        self.dir = Path(self._tmp.name)
        self.tmpdir = self.dir / "tmp"
        self.tmpdir.mkdir()
        self.env = dict(os.environ, TMPDIR=str(self.tmpdir), EGG_CACHE_DIR=str(self.dir / "cache"))

    def tearDown(self):
        self._tmp.cleanup()

    def op(self, text, name="op.py"):
        path = self.dir / name
        path.write_text(text)
        return path

    def argv(self, op, *extra):
        argv = [EGG_GEN, "generate", str(op), "--arch", "sm_90", "--out", str(self.dir / "out"),
                "--python", PYTHON, "--no-verify"]
        if NVCC:
            argv += ["--nvcc", NVCC]
        return argv + list(extra)

    def leftovers(self):
        """EGG's temp folders and nvcc's files in TMPDIR (torch keeps caches there too). The quiet
        locks' files (egg-gpu-<uid>.lock, the CPU lock's .lock.cpu, each one's .gate and the
        CPU slots' .lock.cpu.slot<K>, base/gpu_lock.h, base/cpu_slot.h) are machine-wide state that stays by design, not leftovers of a run."""
        return sorted(p.name for p in self.tmpdir.iterdir()
                      if p.name.startswith(("egg-", "tmpxft"))
                      and not re.fullmatch(r"egg-gpu-\d+\.lock(\.cpu)?(\.gate|\.slot\d+)?", p.name))

    def wait_for_frontend(self, proc):
        pid_file = self.dir / "frontend.pid"
        deadline = time.time() + 60
        while time.time() < deadline:
            if pid_file.exists() and pid_file.read_text():
                return int(pid_file.read_text())
            if proc.poll() is not None:
                self.fail("egg-gen ended before op.py ran: %s" % proc.communicate()[1])
            time.sleep(0.05)
        self.fail("op.py never ran")

    def test_sigterm_and_sigint_end_the_frontend_and_remove_temp_folders(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(signal=sig.name):
                (self.dir / "frontend.pid").unlink(missing_ok=True)
                op = self.op(SPIN_OP.format(body="pass"))
                proc = subprocess.Popen(self.argv(op), env=self.env, stderr=subprocess.PIPE,
                                        text=True)
                frontend = self.wait_for_frontend(proc)
                self.assertTrue(self.leftovers(), "no temp folder while tracing?")
                proc.send_signal(sig)
                _, err = proc.communicate(timeout=20)
                self.assertEqual(proc.returncode, -sig, err)
                self.assertTrue(dies(frontend), "the frontend outlived egg-gen")
                self.assertEqual(self.leftovers(), [], err)
                self.assertIn("stopped by " + sig.name, err)

    def test_sigkill_keeps_outputs_and_the_next_run_sweeps_what_it_left(self):
        if not NVCC:
            self.skipTest("needs nvcc (the first generation compiles its kernel)")
        good = self.op(GOOD_OP, "relu_twice.py")
        first = subprocess.run(self.argv(good), env=self.env, capture_output=True, text=True,
                               timeout=240)
        self.assertEqual(first.returncode, 0, first.stderr)
        out = self.dir / "out"
        before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
        self.assertIn(Path("relu_twice.cu"), before)
        # The same kernel again, from an op.py that now spins: killed while it traces.
        good.write_text(SPIN_OP.format(body="pass"))
        proc = subprocess.Popen(self.argv(good), env=self.env, stderr=subprocess.PIPE, text=True)
        frontend = self.wait_for_frontend(proc)
        proc.kill()
        proc.communicate(timeout=20)
        self.assertTrue(dies(frontend), "the frontend outlived a SIGKILLed egg-gen")
        after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
        self.assertEqual(after, before, "SIGKILL changed or removed previous outputs")
        stale = self.leftovers()
        self.assertTrue(any(n.startswith("egg-work-") for n in stale), stale)
        # Another user's folder and a live process's folder stay.
        live = self.tmpdir / ("egg-work-x-%d-abcdefgh" % os.getpid())
        live.mkdir()
        nxt = subprocess.run(self.argv(self.dir / "missing.py"), env=self.env,
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(nxt.returncode, 1, nxt.stderr)
        self.assertEqual(self.leftovers(), [live.name])

    def test_trace_timeout_is_settable_and_a_long_trace_reports_progress(self):
        op = self.op(SPIN_OP.format(body="time.sleep(1)"))
        start = time.time()
        r = subprocess.run(self.argv(op, "--trace-timeout", "16"), env=self.env,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertLess(time.time() - start, 60)
        self.assertIn("egg: still tracing op.py after 15 s", r.stderr)
        self.assertIn("tracing did not finish within 16 s", r.stderr)
        self.assertIn("--trace-timeout", r.stderr)
        self.assertEqual(self.leftovers(), [])
        start = time.time()
        r = subprocess.run(self.argv(op), env=dict(self.env, EGG_TRACE_TIMEOUT="2"),
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("tracing did not finish within 2 s", r.stderr)
        self.assertLess(time.time() - start, 30)
        r = subprocess.run(self.argv(op, "--trace-timeout", "-1"), env=self.env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("--trace-timeout", r.stderr)

    def test_op_py_sees_only_the_allowlisted_environment(self):
        op = self.op("import os, json, pathlib\n"
                     "pathlib.Path(__file__).with_name('env.json').write_text("
                     "json.dumps(dict(os.environ)))\n")
        env = dict(self.env, github_token="leak-1", DATABASE_URL="postgres://u:leak-2@db",
                   EGG_LLM_API_KEY="leak-3", OPENAI_API_KEY="leak-4", AWS_SESSION_TOKEN="leak-5",
                   EGG_PASS_ENV="EGG_LIFECYCLE_PASSED", EGG_LIFECYCLE_PASSED="yes",
                   EGG_GPU_LOCK=str(self.dir / "gpu.lock"))
        r = subprocess.run(self.argv(op), env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 1, r.stderr)  # op.py defines no Model: a user error
        import json
        seen = json.loads((self.dir / "env.json").read_text())
        self.assertNotIn("leak-", json.dumps(seen))
        self.assertEqual(seen.get("EGG_LIFECYCLE_PASSED"), "yes")
        self.assertEqual(seen.get("EGG_GPU_LOCK"), str(self.dir / "gpu.lock"))
        # The parent's PATH passes (an interpreter's launcher, e.g. pyenv's, may add to it).
        for entry in os.environ["PATH"].split(os.pathsep):
            self.assertIn(entry, seen.get("PATH", "").split(os.pathsep))
        self.assertTrue(seen.get("PYTHONPATH", "").endswith("python"), seen.get("PYTHONPATH"))
        allowed = {"PATH", "HOME", "TMPDIR", "LANG", "LANGUAGE", "LD_LIBRARY_PATH", "LIBRARY_PATH",
                   "CPATH", "EGG_GPU_LOCK", "EGG_GPU_MEM_LOCK", "EGG_REF_CACHE_MB", "EGG_HARNESS_HOLD", "EGG_COMPUTE_SANITIZER",
                   "EGG_HARNESS_UNDER_SANITIZER", "EGG_LIFECYCLE_PASSED", "PYTHONPATH",
                   "PYTHONDONTWRITEBYTECODE"}
        # Python itself may add a few (LC_CTYPE coercion).
        extra = [k for k in seen if k not in allowed and not k.startswith(("LC_", "CUDA_", "NVIDIA_"))]
        self.assertEqual(extra, [])


if __name__ == "__main__":
    unittest.main()
