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
