"""The shared cache end to end: the real egg-gen and libcurl against an HTTP object store on loopback.
Environment: EGG_GEN, EGG_DATA_DIR, EGG_TEST_PYTHON, EGG_TEST_NVCC (tests/remote_cache/CMakeLists.txt)."""
import os
import socket
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
OP = """import torch, torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.sigmoid(x) * 3.0
def get_inputs(): return [torch.randn(256, 256)]
def get_init_inputs(): return []
"""


class RemoteCacheTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="egg-remote-cache-")
        self.dir = Path(self.tmp.name)
        (self.dir / "op.py").write_text(OP)
        self.log = self.dir / "requests.log"
        self.log.touch()
        self.server = subprocess.Popen([sys.executable, str(HERE / "cache_server.py"), str(self.log)],
                                       stdout=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{int(self.server.stdout.readline())}"

    def tearDown(self):
        self.server.kill()
        self.server.wait()
        self.server.stdout.close()
        self.tmp.cleanup()

    def generate(self, local_cache, url, *extra):
        args = [os.environ["EGG_GEN"], "generate", str(self.dir / "op.py"), "--arch", "sm_90",
                "--out", str(self.dir / "out" / local_cache), "--python", os.environ["EGG_TEST_PYTHON"],
                "--nvcc", os.environ["EGG_TEST_NVCC"], "--data-dir", os.environ["EGG_DATA_DIR"],
                "--cache-dir", str(self.dir / local_cache), "--remote-cache", url, *extra]
        env = {k: v for k, v in os.environ.items() if not k.startswith("EGG_REMOTE")}
        return subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)

    def requests(self):
        return self.log.read_text().splitlines()

    def test_one_machine_generates_another_reuses(self):
        first = self.generate("machine-a", self.url)
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertIn("cache miss", first.stderr)
        self.assertTrue(any(r.startswith("PUT /ac/") for r in self.requests()), self.requests())
        second = self.generate("machine-b", self.url)
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertIn("cache remote-hit", second.stderr)
        a = (self.dir / "out" / "machine-a" / "op.cu").read_bytes()
        b = (self.dir / "out" / "machine-b" / "op.cu").read_bytes()
        self.assertEqual(a, b)

    def test_read_only_never_uploads(self):
        r = self.generate("machine-c", self.url, "--remote-cache-read-only")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([q for q in self.requests() if q.startswith("PUT")], [])
        self.assertTrue(any(q.startswith("GET /ac/") for q in self.requests()))

    def test_an_unreachable_cache_is_a_warning_not_a_failure(self):
        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        r = self.generate("machine-d", f"http://127.0.0.1:{port}")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("remote cache unreachable", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
