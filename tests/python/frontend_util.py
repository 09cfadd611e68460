"""Shared helpers for the frontend tests: write an op.py into a temp dir and trace it."""

import contextlib
import io
import json
import os
import shutil
import tempfile
import textwrap
import warnings

with warnings.catch_warnings():  # import torch once, quietly (numpy is absent in CI)
    warnings.filterwarnings("ignore", message=".*Failed to initialize NumPy.*")
    import torch  # noqa: F401

from egg_frontend.__main__ import main  # noqa: E402

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


class Run:
    """The result of one in-process trace."""

    def __init__(self, rc, out, stderr, op_path):
        self.rc, self.out, self.stderr, self.op_path = rc, out, stderr, op_path
        self.spec = self._json("spec.json")
        self.error = self._json("error.json")
        if self.spec is not None:
            validate(self.spec)

    def _json(self, name):
        path = os.path.join(self.out, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                return json.load(f)
        return None

    def files(self):
        found = []
        for root, _, names in os.walk(self.out):
            for n in names:
                found.append(os.path.relpath(os.path.join(root, n), self.out))
        return sorted(found)

    def node(self, name):
        return next(n for n in self.spec["nodes"] if n["name"] == name)

    def out_node(self, i=0):
        """The spec node producing output ``i``."""
        name = self.spec["outputs"][i]["node"]
        return next(n for n in self.spec["nodes"] if n["name"] == name)


class TempOps:
    """Mixin for unittest.TestCase: a temp dir per test, ops written into it."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="egg_fe_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, name, text, header=True):
        path = os.path.join(self.tmp, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write((HEADER if header else "") + textwrap.dedent(text).lstrip("\n"))
        return path

    def trace(self, text=None, path=None, seeds=1, out="out", header=True):
        if path is None:
            path = self.write("op.py", text, header)
        out_dir = os.path.join(self.tmp, out)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = main(["trace", "--op", path, "--out", out_dir, "--seeds", str(seeds)])
        return Run(rc, out_dir, err.getvalue(), path)

    def elementwise(self, expr, init="", inputs="[torch.randn(4, 8), torch.randn(4, 8)]"):
        """Trace ``forward(self, x, y): return <expr>`` (``y`` unused when absent)."""
        text = """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
        {init}
            def forward(self, x, y):
                return {expr}
        def get_inputs():
            return {inputs}
        """.replace("{expr}", expr).replace("{inputs}", inputs).replace(
            "{init}", "\n".join("        " + line for line in init.splitlines()) or "")
        return self.trace(text)


DTYPES = {"float32", "float16", "bfloat16", "float64", "int64", "int32", "int8", "uint8", "bool"}
ARG_KINDS = {"node", "scalar", "bool", "none", "list", "string", "dtype", "slice", "ellipsis",
             "dict"}


def validate(spec):
    """Check what docs/SPEC.md promises the C++ reader (raises AssertionError)."""
    def tensor(t, kind_required=False):
        assert isinstance(t["name"], str) and t["name"], t
        assert isinstance(t["shape"], list) and all(type(d) is int for d in t["shape"]), t
        assert t["dtype"] in DTYPES, t
        if kind_required:
            assert t["kind"] in ("parameter", "buffer"), t

    def arg(a, known):
        assert isinstance(a, dict) and len(a) == 1 and next(iter(a)) in ARG_KINDS, a
        if "node" in a:
            assert a["node"] in known, (a, sorted(known))
        if "scalar" in a:
            assert type(a["scalar"]) in (int, float), a
        if "list" in a:
            for x in a["list"]:
                arg(x, known)

    assert spec["schema"] == 2
    assert os.path.isabs(spec["op_file"])
    for t in spec["inputs"]:
        tensor(t)
    for t in spec["params"]:
        tensor(t, True)
    known = {t["name"] for t in spec["inputs"]} | {t["name"] for t in spec["params"]}
    for n in spec["nodes"]:
        tensor(n)
        assert isinstance(n["op"], str) and isinstance(n["attrs"], dict), n
        for a in n["args"]:
            arg(a, known)
        assert isinstance(n["line"], int) and isinstance(n["file"], str), n
        known.add(n["name"])
    assert spec["outputs"], spec
    for i, o in enumerate(spec["outputs"]):
        tensor(o)
        assert o["name"] == "out%d" % i and o["node"] in known, o
    assert spec["deps"] == sorted(set(spec["deps"])) and spec["op_file"] in spec["deps"]
    assert all(os.path.isabs(d) for d in spec["deps"])
    json.dumps(spec, allow_nan=False)
