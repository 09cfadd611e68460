"""The shared cache end to end: the real egg-gen and libcurl against an HTTP object store on loopback
(cache_server.py), a real nginx with WebDAV, and a hostile server (hostile_server.py).
Environment: EGG_GEN, EGG_DATA_DIR, EGG_TEST_PYTHON, EGG_TEST_NVCC, EGG_TEST_NGINX (optional)
(tests/remote_cache/CMakeLists.txt)."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
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
TEAM_KEY = "the team's shared-cache key, 32+ bytes"
TOKEN = "upload-token-5b2f9c"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SharedCacheCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="egg-remote-cache-")
        self.dir = Path(self.tmp.name)
        (self.dir / "op.py").write_text(OP)
        self.servers = []

    def tearDown(self):
        for server in self.servers:
            server.terminate()  # nginx's master ends its workers on SIGTERM
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            if server.stdout:
                server.stdout.close()
        self.tmp.cleanup()

    def start(self, *argv):
        server = subprocess.Popen([sys.executable, *map(str, argv)], stdout=subprocess.PIPE, text=True)
        self.servers.append(server)
        return f"http://127.0.0.1:{int(server.stdout.readline())}"

    def generate(self, machine, url, *extra, key=TEAM_KEY, token=None):
        args = [os.environ["EGG_GEN"], "generate", str(self.dir / "op.py"), "--arch", "sm_90",
                "--out", str(self.dir / "out" / machine), "--python", os.environ["EGG_TEST_PYTHON"],
                "--nvcc", os.environ["EGG_TEST_NVCC"], "--data-dir", os.environ["EGG_DATA_DIR"],
                "--cache-dir", str(self.dir / machine), "--remote-cache", url, *extra]
        env = {k: v for k, v in os.environ.items() if not k.startswith("EGG_REMOTE")}
        if key:
            env["EGG_REMOTE_CACHE_KEY"] = key
        if token:
            env["EGG_REMOTE_CACHE_TOKEN"] = token
        return subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)

    def kernel(self, machine):
        return (self.dir / "out" / machine / "op.cu").read_text()

    def local_entries(self, machine):
        return [p for p in (self.dir / machine).rglob("kernel.cu")]


class PythonStoreTest(SharedCacheCase):
    def setUp(self):
        super().setUp()
        self.log = self.dir / "requests.log"
        self.log.touch()
        self.url = self.start(HERE / "cache_server.py", self.log, TOKEN)

    def requests(self):
        return self.log.read_text().splitlines()

    def test_one_machine_generates_another_reuses(self):
        first = self.generate("machine-a", self.url, token=TOKEN)
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertIn("cache miss", first.stderr)
        self.assertIn(f"PUT /ac/", "\n".join(self.requests()))
        self.assertTrue(all(r.endswith(" " + TOKEN) for r in self.requests()), self.requests())
        second = self.generate("machine-b", self.url, token=TOKEN)
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertIn("cache remote-hit", second.stderr)
        self.assertEqual(self.kernel("machine-a"), self.kernel("machine-b"))
        for run in (first, second):
            self.assertNotIn(TOKEN, run.stderr + run.stdout)
            self.assertNotIn(TEAM_KEY, run.stderr + run.stdout)

    def test_an_upload_without_the_token_is_refused_with_a_warning(self):
        r = self.generate("machine-e", self.url, token="wrong-token-1234")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("refused the upload: HTTP 401 (check EGG_REMOTE_CACHE_TOKEN)", r.stderr)
        self.assertNotIn("wrong-token-1234", r.stderr)

    def test_read_only_never_uploads(self):
        r = self.generate("machine-c", self.url, "--remote-cache-read-only")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([q for q in self.requests() if q.startswith("PUT")], [])
        self.assertTrue(any(q.startswith("GET /ac/") for q in self.requests()))

    def test_without_a_key_the_shared_cache_is_not_used(self):
        r = self.generate("machine-f", self.url, key=None)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("EGG_REMOTE_CACHE_KEY is not set", r.stderr)
        self.assertEqual(self.requests(), [])

    def test_an_unreachable_cache_is_a_warning_naming_the_setting(self):
        r = self.generate("machine-d", f"http://127.0.0.1:{free_port()}")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("remote cache unreachable", r.stderr)
        self.assertIn("EGG_REMOTE_CACHE", r.stderr)
        self.assertNotIn("EGG_LLM_BASE_URL", r.stderr)


class HostileServerTest(SharedCacheCase):
    """Every trick is a miss with a warning; the kernel is generated here and only it is cached."""

    def attack(self, mode, warning, *extra):
        url = self.start(HERE / "hostile_server.py", mode, TEAM_KEY)
        r = self.generate("victim", url, *extra)
        self.assertIn(warning, r.stderr)
        self.assertIn("generating locally", r.stderr)
        self.assertNotIn("remote-hit", r.stderr)
        for entry in self.local_entries("victim"):
            self.assertNotIn("whatever the server wants", entry.read_text())
        self.assertFalse((self.dir / "escaped").exists())
        return r

    def test_a_forged_verified_entry_does_not_pass_require_verified(self):
        r = self.attack("forged", "remote entry is not signed", "--require-verified")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("kernel is not verified", r.stderr)
        self.assertFalse((self.dir / "out" / "victim" / "op.cu").exists())

    def test_an_entry_signed_with_another_key_is_a_miss(self):
        r = self.attack("wrong_key", "signature was not made with EGG_REMOTE_CACHE_KEY")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("whatever the server wants", self.kernel("victim"))

    def test_a_signed_kernel_that_does_not_compile_is_a_miss(self):
        r = self.attack("signed_junk", "the remote entry's kernel does not compile")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("whatever the server wants", self.kernel("victim"))

    def test_a_file_name_leaving_the_entry_is_a_miss(self):
        r = self.attack("bad_name", "file name that is not allowed")
        self.assertEqual(r.returncode, 0, r.stderr)


NGINX_CONF = """
load_module {module};
error_log {root}/error.log;
pid {root}/nginx.pid;
daemon off;
worker_processes 1;
events {{ worker_connections 64; }}
http {{
  access_log {root}/access.log;
  client_body_temp_path {root}/body;
  proxy_temp_path {root}/proxy;
  fastcgi_temp_path {root}/fastcgi;
  uwsgi_temp_path {root}/uwsgi;
  scgi_temp_path {root}/scgi;
  client_max_body_size 256m;
  # Reads are open; a write needs the team's upload token (what a bazel-remote or a CI cache
  # behind nginx asks for).
  map "$request_method:$http_authorization" $egg_denied {{
    default 1;
    "~^(GET|HEAD|PROPFIND|OPTIONS):" 0;
    "PUT:Bearer {token}" 0;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      if ($egg_denied) {{ return 401; }}
      root {root}/store;
      dav_methods PUT;
      dav_ext_methods PROPFIND OPTIONS;
      create_full_put_path on;
      dav_access user:rw group:r all:r;
    }}
  }}
}}
"""


@unittest.skipUnless(os.environ.get("EGG_TEST_NGINX"), "no nginx (Debian: nginx libnginx-mod-http-dav-ext)")
class NginxWebDavTest(SharedCacheCase):
    def setUp(self):
        super().setUp()
        root = self.dir / "nginx"
        for sub in ("store", "body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (root / sub).mkdir(parents=True)
        os.chmod(self.dir, 0o755)  # mkdtemp's 0700 would keep the workers out
        os.chmod(root, 0o777)
        for sub in root.iterdir():
            os.chmod(sub, 0o777)  # the workers may run as nobody
        self.port = free_port()
        module = os.environ.get("EGG_TEST_NGINX_DAV_MODULE",
                                "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so")
        (root / "nginx.conf").write_text(NGINX_CONF.format(module=module, root=root,
                                                           port=self.port, token=TOKEN))
        self.nginx_root = root
        server = subprocess.Popen([os.environ["EGG_TEST_NGINX"], "-e", str(root / "error.log"),
                                   "-p", str(root), "-c",
                                   str(root / "nginx.conf")], stderr=subprocess.PIPE, text=True)
        self.servers.append(server)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None:
                    self.fail("nginx did not start: " + server.stderr.read() +
                              (root / "error.log").read_text())
                time.sleep(0.1)
        self.url = f"http://127.0.0.1:{self.port}"

    def test_a_team_shares_kernels_through_nginx(self):
        first = self.generate("machine-a", self.url, token=TOKEN)
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertNotIn("warning: op: remote", first.stderr)
        stored = list((self.nginx_root / "store" / "ac").iterdir())
        self.assertEqual(len(stored), 1)
        second = self.generate("machine-b", self.url, "--remote-cache-read-only")
        self.assertEqual(second.returncode, 0, second.stderr)
        self.assertIn("cache remote-hit", second.stderr)
        self.assertEqual(self.kernel("machine-a"), self.kernel("machine-b"))
        self.assertNotIn(TOKEN, first.stderr + second.stderr)

    def test_nginx_refuses_an_upload_without_the_token(self):
        r = self.generate("machine-c", self.url)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("refused the upload: HTTP 401", r.stderr)
        self.assertFalse((self.nginx_root / "store" / "ac").exists())


if __name__ == "__main__":
    unittest.main(verbosity=2)
