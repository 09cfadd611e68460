#!/usr/bin/env python3
"""Which Python egg-gen runs: an op.py that fails at import with sys.executable in its message
names the interpreter that traced it, in under a second of work per case.

    test_python_choice.py --egg-gen <exe> --configured <EGG's configured python> --work <dir>
"""
import argparse
import os
import shutil
import subprocess
import sys

failed = False


def check(cond, what):
    global failed
    print(("ok   " if cond else "FAIL ") + what)
    failed = failed or not cond


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--egg-gen", required=True)
    ap.add_argument("--configured", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    op = os.path.join(a.work, "who.py")
    with open(op, "w") as f:
        f.write("import os, sys\nraise RuntimeError('traced by <%s|%s>' % "
                "(sys.executable, os.environ.get('WHO', 'configured')))\n")
    # python3 on PATH is a decoy that says so; Pythons given by path are wrappers that say who
    # they are (stderr) before running the real one.
    decoys = os.path.join(a.work, "bin")
    os.makedirs(decoys)

    def script(path, body):
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, 0o755)
        return path

    script(os.path.join(decoys, "python3"), "echo 'decoy python3 on PATH' >&2; exit 3")
    named = script(os.path.join(a.work, "named-python"), 'WHO=env exec %s "$@"' % a.configured)
    flag = script(os.path.join(a.work, "flag-python"), 'WHO=flag exec %s "$@"' % a.configured)
    no_torch = script(os.path.join(a.work, "python-without-torch"), 'exec %s -S "$@"' % a.configured)
    env = {k: v for k, v in os.environ.items() if k != "EGG_PYTHON"}
    env["PATH"] = decoys + os.pathsep + env.get("PATH", "")

    def gen(extra_env=None, args=()):
        e = dict(env, **(extra_env or {}))
        return subprocess.run([a.egg_gen, "generate", op, "--arch", "sm_90", "--no-verify",
                               "--no-cache", "--out", os.path.join(a.work, "out"), *args],
                              capture_output=True, text=True, env=e, timeout=120)

    def traced_by(r):
        s = r.stderr
        i = s.find("traced by <")
        return s[i + len("traced by <"):s.find(">", i)] if i >= 0 else None

    real = subprocess.run([a.configured, "-c", "import sys; print(sys.executable)"],
                          capture_output=True, text=True).stdout.strip()
    r = gen()
    check(r.returncode == 1 and traced_by(r) == real + "|configured",
          "without --python or EGG_PYTHON: the configured Python %s, not python3 on PATH "
          "(exit %d, traced by %s)" % (real, r.returncode, traced_by(r)))
    r = gen({"EGG_PYTHON": named})
    check(r.returncode == 1 and traced_by(r) == real + "|env",
          "EGG_PYTHON=%s is used (exit %d)" % (named, r.returncode))
    r = gen({"EGG_PYTHON": named}, ["--python", flag])
    check(r.returncode == 1 and traced_by(r) == real + "|flag",
          "--python wins over EGG_PYTHON (exit %d)" % r.returncode)
    r = gen({"EGG_PYTHON": no_torch})
    check(r.returncode == 1 and "cannot import torch" in r.stderr and "egg: hint: " in r.stderr
          and "EGG_PYTHON" in r.stderr and "bug in EGG" not in r.stderr,
          "a Python without torch is a user error saying what to do (exit %d: %s)" %
          (r.returncode, r.stderr.strip()[-400:]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
