"""tools/trace_coverage.py: traces every op.py of a folder with the real frontend and counts
traced / user errors by message class."""

import importlib.util
import io
import json
import os
import shutil
import tempfile
import unittest
from contextlib import redirect_stdout

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
_spec = importlib.util.spec_from_file_location("trace_coverage",
                                               os.path.join(ROOT, "tools", "trace_coverage.py"))
coverage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(coverage)

GOOD = """import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(4, 4)]
"""
RANDOM = GOOD.replace("torch.relu(x)", "x + torch.rand(4, 4)")


class Classes(unittest.TestCase):
    def test_message_class_drops_particulars(self):
        self.assertEqual(coverage.message_class(
            "forward input 1 is float, not a tensor"), "forward input <n> is float, not a tensor")
        self.assertEqual(coverage.message_class(
            "forward draws random numbers (bernoulli_): its output differs"),
            "forward draws random numbers")
        self.assertEqual(coverage.message_class("executing op.py failed: ModuleNotFoundError: x"),
                         "executing op.py failed")

    def test_classify(self):
        self.assertEqual(coverage.classify(0, None), ("traced", ""))
        self.assertEqual(coverage.classify(None, None), ("timeout", ""))
        self.assertEqual(coverage.classify(1, {"kind": "user", "message": "a: b"}),
                         ("user error", "a"))
        self.assertEqual(coverage.classify(2, {"kind": "internal", "message": "boom"}),
                         ("internal error", "boom"))


class EndToEnd(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="egg_cov_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_counts_a_folder(self):
        folder = os.path.join(self.tmp, "level9")
        os.makedirs(folder)
        for name, text in (("1_good.py", GOOD), ("2_random.py", RANDOM)):
            with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
                f.write(text)
        rows = os.path.join(self.tmp, "rows.json")
        table = os.path.join(self.tmp, "table.md")
        out = io.StringIO()
        with redirect_stdout(out):
            rc = coverage.main(["--python-dir", os.path.join(ROOT, "python"), "-j", "2",
                                "--json", rows, "--markdown", table, folder])
        self.assertEqual(rc, 0)
        with open(rows, encoding="utf-8") as f:
            got = {os.path.basename(r["file"]): (r["outcome"], r["class"]) for r in json.load(f)}
        self.assertEqual(got, {"1_good.py": ("traced", ""),
                               "2_random.py": ("user error", "forward draws random numbers")})
        with open(table, encoding="utf-8") as f:
            text = f.read()
        self.assertEqual(text, out.getvalue())
        self.assertIn("| level9 | 2 | 1 (50 %) | user error: forward draws random numbers: 1 |",
                      text)
        # in this process: the same outcomes
        inproc = os.path.join(self.tmp, "inproc.json")
        with redirect_stdout(io.StringIO()):
            coverage.main(["--python-dir", os.path.join(ROOT, "python"), "--in-process",
                           "--json", inproc, folder])
        with open(inproc, encoding="utf-8") as f:
            self.assertEqual({os.path.basename(r["file"]): (r["outcome"], r["class"])
                              for r in json.load(f)}, got)


if __name__ == "__main__":
    unittest.main()
