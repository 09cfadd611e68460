"""tools/suite_table.py: both torch.compile modes as columns, and the kernels slower than eager."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

_TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "suite_table.py")


def row(op, kernel, eager, compile_, tuned=None, vs_eager="faster"):
    r = {"op": op, "verified": True, "status": "verified", "kernel_ms": kernel, "eager_ms": eager,
         "compile_ms": compile_, "speedup_vs_eager": eager / kernel,
         "speedup_vs_compile": compile_ / kernel, "generate_s": 10, "vs_eager": vs_eager}
    if tuned is not None:
        r.update(compile_max_autotune_ms=tuned, speedup_vs_compile_max_autotune=tuned / kernel)
    return r


class SuiteTableTest(unittest.TestCase):
    def test_max_autotune_columns_and_slower_than_eager(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows = os.path.join(tmp, "rows.jsonl")
            with open(rows, "w") as f:
                f.write(json.dumps(row("gemm_a", 1.0, 2.0, 1.5, tuned=1.25)) + "\n")
                f.write(json.dumps(row("ew_b", 1.0, 0.5, 0.5, vs_eager="slower")) + "\n")
            out = subprocess.run([sys.executable, _TOOL, rows], capture_output=True, text=True,
                                 check=True).stdout
        self.assertIn("| compile ms | max-autotune ms | vs eager | vs compile | vs max-autotune |", out)
        self.assertIn("| gemm_a | ? | yes | 1.0000 | 2.0000 | 1.5000 | 1.2500 | 2.00x | 1.50x | 1.25x |", out)
        self.assertIn("| ew_b | ? | yes | 1.0000 | 0.5000 | 0.5000 | - | 0.50x | 0.50x | - |", out)
        self.assertIn("faster than torch.compile max-autotune-no-cudagraphs: 1 of 2 ops (50%); "
                      "geomean 1.25x", out)
        self.assertIn("slower than eager beyond 3% noise (said in the build log and the manifest): "
                      "ew_b 0.50x", out)

    def test_only_dir_keeps_a_folders_ops_and_the_latest_row(self):
        with tempfile.TemporaryDirectory() as tmp:
            level = os.path.join(tmp, "level2")
            os.mkdir(level)
            open(os.path.join(level, "7_Conv_ReLU.py"), "w").close()
            first, later = os.path.join(tmp, "a.jsonl"), os.path.join(tmp, "b.jsonl")
            with open(first, "w") as f:
                f.write(json.dumps(row("t_7_Conv_ReLU", 2.0, 2.0, 2.0)) + "\n")
                f.write(json.dumps(row("t_9_Other", 1.0, 3.0, 3.0)) + "\n")
            with open(later, "w") as f:
                f.write(json.dumps(row("t_7_Conv_ReLU", 1.0, 2.0, 1.5)) + "\n")
            out = subprocess.run([sys.executable, _TOOL, first, later, "--only-dir", level],
                                 capture_output=True, text=True, check=True).stdout
            self.assertIn("| t_7_Conv_ReLU | ? | yes | 1.0000 | 2.0000 | 1.5000 |", out)
            self.assertNotIn("t_9_Other", out)
            self.assertIn("- ops: 1; verified: 1 (100%)", out)
            empty = os.path.join(tmp, "level1")
            os.mkdir(empty)
            r = subprocess.run([sys.executable, _TOOL, first, "--only-dir", empty],
                               capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no row names an op.py of", r.stderr)


if __name__ == "__main__":
    unittest.main()
