"""A hostile corpus: bad op.py files (ops/) and bad command lines (command_lines.json), each run
through the real egg-gen, with its exit status and message asserted and nothing left behind (no
output, no cache entry, no temp folder). Command lines marked before_trace must fail in under a
second without running op.py.

An op file states what it expects in its first lines:
    # exit: 1
    # message: <text the error must contain>
and a line ending in "# <- here" is the line the error must name (<file>:<line>:).
Environment: EGG_GEN, EGG_DATA_DIR, EGG_TEST_PYTHON, EGG_TEST_NVCC (CMakeLists.txt)."""
import concurrent.futures
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
OPS = HERE / "ops"
# A valid op that leaves a mark when it is imported, so a command line can show it never ran.
MARKED_OP = """import pathlib
import torch
import torch.nn as nn

pathlib.Path(__file__).with_suffix(".ran").touch()


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(8, 8)]
"""


def expectation(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    head = dict(re.findall(r"^# (exit|message): (.*)$", text, re.M))
    if "exit" not in head:
        return None  # a helper module, not an op
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if line.endswith("# <- here")]
    return {"exit": int(head["exit"]), "message": head["message"],
            "line": lines[0] if lines else None}


# The quiet locks' files (base/gpu_lock.h: the GPU lock, the CPU lock beside it, their gates; the CPU
# slots of base/cpu_slot.h) are machine-wide state that stays by design.
QUIET_LOCK = re.compile(r"egg-gpu-\d+\.lock(\.cpu)?(\.gate|\.slot\d+)?")


def files_under(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if not p.is_dir() and not QUIET_LOCK.fullmatch(p.name))


class Case:
    """One run of egg-gen in a fresh folder: in/ (inputs), out/, cache/, tmp/ (its TMPDIR)."""

    def __init__(self, base, name):
        self.root = base / name
        self.inputs = self.root / "in"
        for sub in ("in", "out", "cache", "tmp"):
            (self.root / sub).mkdir(parents=True)
        self.out = self.root / "out"

    def run(self, args, env_extra=None, defaults=True, cache_dir=True):
        args = list(args)
        if defaults and args[0] in ("generate", "bench"):
            for flag, value in (("--python", os.environ["EGG_TEST_PYTHON"]),
                                ("--nvcc", os.environ["EGG_TEST_NVCC"]),
                                ("--data-dir", os.environ["EGG_DATA_DIR"])):
                if flag not in args:
                    args += [flag, value]
            if cache_dir and "--cache-dir" not in args:
                args += ["--cache-dir", str(self.root / "cache")]
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("EGG_") and not k.endswith("_API_KEY")}
        env.update({"TMPDIR": str(self.root / "tmp"), "EGG_CACHE_DIR": str(self.root / "cache"),
                    "PYTHONDONTWRITEBYTECODE": "1"})
        env.update(env_extra or {})
        start = time.monotonic()
        r = subprocess.run([os.environ["EGG_GEN"], *args], env=env, capture_output=True,
                           text=True, timeout=300)
        return r, time.monotonic() - start

    def left_behind(self, inputs_before):
        """Files that were not there before the run (the inputs' own files excepted)."""
        now = files_under(self.root)
        return [f for f in now if f not in inputs_before]


class HostileCorpusTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="egg-hostile-")
        cls.base = Path(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, name, r, expected, where=None):
        """Assertion messages for one run (empty when it behaved)."""
        problems = []
        if r.returncode != expected["exit"]:
            problems.append("exit %d, expected %d" % (r.returncode, expected["exit"]))
        if expected["message"] not in r.stderr:
            problems.append("no %r in the message" % expected["message"])
        if "egg: error: " not in r.stderr:
            problems.append("no 'egg: error:' line")
        if "a bug in EGG" in r.stderr or "internal:" in r.stderr:
            problems.append("reported as a bug in EGG")
        if where and where not in r.stderr:
            problems.append("the message does not name %s" % where)
        return ["%s: %s\n--- stderr:\n%s" % (name, p, r.stderr[-1500:]) for p in problems]

    def test_bad_ops(self):
        ops = sorted(p for p in OPS.glob("*.py") if expectation(p))
        self.assertGreaterEqual(len(ops), 40)

        def one(op):
            expected = expectation(op)
            case = Case(self.base / "ops", op.stem)
            for helper in OPS.glob("egg_hostile_*.py"):  # local modules the ops import
                shutil.copy(helper, case.inputs)
            shutil.copy(op, case.inputs)
            before = files_under(case.root)
            r, _ = case.run(["generate", str(case.inputs / op.name), "--arch", "sm_90",
                             "--out", str(case.out)])
            where = "%s:%d:" % (op.name, expected["line"]) if expected["line"] else None
            problems = self.check(op.stem, r, expected, where)
            left = case.left_behind(before)
            if left:
                problems.append("%s: left behind %s" % (op.stem, left))
            return problems

        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            problems = [p for found in pool.map(one, ops) for p in found]
        self.assertEqual(problems, [], "\n\n".join(problems))

    def test_bad_command_lines(self):
        cases = json.loads((HERE / "command_lines.json").read_text())
        self.assertGreaterEqual(len(cases), 30)
        problems = []
        for spec in cases:
            case = Case(self.base / "cli", spec["name"])
            op = case.inputs / "ok_op.py"
            op.write_text(MARKED_OP)
            (case.inputs / "a_file").write_text("not a folder\n")
            (case.inputs / "empty").mkdir()
            no_torch = case.inputs / "python-without-torch"
            # -S: no site-packages, so no torch (the frontend itself needs only the standard
            # library until then).
            no_torch.write_text('#!/bin/sh\nexec "%s" -S "$@"\n' % os.environ["EGG_TEST_PYTHON"])
            no_torch.chmod(no_torch.stat().st_mode | stat.S_IEXEC)
            values = {"dir": str(case.inputs), "op": str(op), "out": str(case.out),
                      "file": str(case.inputs / "a_file"), "cache": str(case.root / "cache"),
                      "empty": str(case.inputs / "empty"), "python_without_torch": str(no_torch)}

            def fill(text):
                return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], text)

            before = files_under(case.root)
            r, seconds = case.run([fill(a) for a in spec["args"]],
                                  {k: fill(v) for k, v in spec.get("env", {}).items()},
                                  cache_dir=not spec.get("no_cache_dir", False))
            expected = {"exit": spec["exit"], "message": fill(spec["message"])}
            found = self.check(spec["name"], r, expected)
            if spec.get("before_trace"):
                if op.with_suffix(".ran").exists():
                    found.append("%s: op.py ran before the mistake was found" % spec["name"])
                if seconds >= 1.0:
                    found.append("%s: took %.2f s (a mistake is found in under a second)"
                                 % (spec["name"], seconds))
            left = case.left_behind(before)
            if left:
                found.append("%s: left behind %s" % (spec["name"], left))
            problems += found
        self.assertEqual(problems, [], "\n\n".join(problems))


if __name__ == "__main__":
    unittest.main(verbosity=2)
