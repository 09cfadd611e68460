"""egg-harness --strict runs a copy of itself under compute-sanitizer, as the sanitizer's child. That
copy (EGG_HARNESS_UNDER_SANITIZER=1) must die when its parent dies, or killing egg-harness leaves a
process holding the GPU (issue 12). No GPU needed: the copy is made to wait on a reference server
that never answers, its parent is killed, and the copy must be gone within seconds. The control,
the same run without the variable, must outlive its parent (so the check can fail).

    python3 dies_with_parent.py <egg-harness>
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

PARENT = ("import subprocess, sys, time\n"
          "child = subprocess.Popen(sys.argv[1:])\n"
          "print(child.pid, flush=True)\n"
          "time.sleep(600)\n")


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead
    except FileNotFoundError:
        return False


def run(harness, tmp, under_sanitizer):
    sock_path = os.path.join(tmp, "refs-%d.sock" % under_sanitizer)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(sock_path)
    server.listen(1)
    server.settimeout(60)
    spec = os.path.join(tmp, "spec.json")
    with open(spec, "w") as f:
        json.dump({"schema": 2, "inputs": [{"name": "x", "shape": [4], "dtype": "float32"}],
                   "params": [], "outputs": [{"name": "out0", "shape": [4], "dtype": "float32"}]},
                  f)
    env = dict(os.environ)
    env.pop("EGG_HARNESS_UNDER_SANITIZER", None)
    if under_sanitizer:
        env["EGG_HARNESS_UNDER_SANITIZER"] = "1"
    lib = "/lib/x86_64-linux-gnu/libm.so.6"  # any library that does not link PyTorch
    work = os.path.join(tmp, "work-%d" % under_sanitizer)
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, harness, "verify", "--lib", lib, "--spec", spec,
         "--refs", sock_path, "--work", work, "--out", os.path.join(work, "result.json")],
        env=env, stdout=subprocess.PIPE, text=True)
    pid = int(parent.stdout.readline())
    conn, _ = server.accept()  # the harness now waits for the server's first reply
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    survived = alive(pid)
    if survived:
        os.kill(pid, signal.SIGKILL)
    conn.close()
    server.close()
    return survived


def main():
    harness = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="egg-dies-with-parent-") as tmp:
        if run(harness, tmp, under_sanitizer=True):
            print("FAIL: the sanitizer's copy of egg-harness outlived its parent")
            return 1
        if not run(harness, tmp, under_sanitizer=False):
            print("FAIL: the control run did not outlive its parent: the check cannot tell")
            return 1
    print("ok: the copy under compute-sanitizer dies with its parent; a plain run does not")
    return 0


if __name__ == "__main__":
    sys.exit(main())
