"""tools/attempts.py: every candidate of each op from bench manifests (a folder or a .tgz)."""
import contextlib
import importlib.util
import io
import json
import os
import tarfile
import tempfile
import unittest

_TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "attempts.py")
_spec = importlib.util.spec_from_file_location("attempts", _TOOL)
attempts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(attempts)


def attempt(candidate, ms, status="verified"):
    return {"candidate": candidate,
            "profile": {"harness": {"status": status, "timing": {"event_ms": {"median": ms}}}}}


MANIFEST = {"candidate": "b", "stages": [
    {"attempts": [attempt("a", 0.5), attempt("b", 0.25)]},
    {"attempts": [attempt("b", 0.26), {"candidate": "c", "status": "compile_error"},
                  {"candidate": "d", "failure_class": "launch_error", "result": "launch_error",
                   "message": "set 0: egg_candidate_launch returned cudaErrorNotSupported"}]},
    {"step": "verify", "rejected": [{"candidate": "e", "failure_class": "sanitizer",
                                     "message": "compute-sanitizer memcheck reported errors:"}]}]}


class AttemptsToolTest(unittest.TestCase):
    def run_tool(self, *argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = attempts.main(list(argv))
        return rc, out.getvalue(), err.getvalue()

    def write_tree(self, root):
        for op in ("op_one", "op_two"):
            os.makedirs(os.path.join(root, "build-suite", op))
            with open(os.path.join(root, "build-suite", op, "manifest.json"), "w") as f:
                json.dump(MANIFEST, f)

    def test_folder_lists_every_stage_and_the_winner(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.write_tree(tmp)
            rc, out, _ = self.run_tool(os.path.join(tmp, "build-suite"), "--op", "op_two")
        self.assertEqual(rc, 0)
        self.assertNotIn("op_one", out)
        self.assertIn("op_two  winner: b", out)
        lines = out.splitlines()
        self.assertRegex(lines[1], r"stage 1\s+a\s+verified\s+0\.5000 ms")
        self.assertRegex(lines[3], r"stage 2\s+b\s+verified\s+0\.2600 ms")
        self.assertRegex(lines[4], r"stage 2\s+c\s+compile_error\s+-$")
        # A failed attempt's class and first line (as the pipeline records them).
        self.assertRegex(lines[5], r"stage 2\s+d\s+launch_error\s+-\s+set 0: egg_candidate_launch "
                                   r"returned cudaErrorNotSupported$")
        # The verify step's rejections of a winner that failed the final check.
        self.assertRegex(lines[6], r"verify\s+e\s+sanitizer\s+rejected by the final check: "
                                   r"compute-sanitizer memcheck")

    def test_tgz_as_gpu_suite_writes_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.write_tree(tmp)
            tgz = os.path.join(tmp, "manifests.tgz")
            with tarfile.open(tgz, "w:gz") as tar:
                tar.add(os.path.join(tmp, "build-suite"), arcname="build-suite")
            rc, out, _ = self.run_tool(tgz)
        self.assertEqual(rc, 0)
        self.assertLess(out.index("op_one"), out.index("op_two"))

    def test_kernels_lists_each_candidates_kernels_and_the_baselines(self):
        m = json.loads(json.dumps(MANIFEST))
        timing = m["stages"][0]["attempts"][1]["profile"]["harness"]["timing"]
        timing["kernels"] = [{"name": "gemm", "median_ms": 0.2}, {"name": "epilogue", "median_ms": 0.04}]
        timing["cupti_kernel_ms"] = {"median": 0.24}
        m["timing"] = {"baseline_kernels": {"compile": [{"name": "triton_poi_fused_0", "ms": 0.3}]}}
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "op_k"))
            with open(os.path.join(tmp, "op_k", "manifest.json"), "w") as f:
                json.dump(m, f)
            rc, out, _ = self.run_tool(tmp, "--kernels")
        self.assertEqual(rc, 0)
        lines = out.splitlines()
        self.assertEqual(lines[1], "  compile, per call:")
        self.assertRegex(lines[2], r"0\.3000 ms  triton_poi_fused_0$")
        self.assertIn("(no per-kernel times recorded)", lines[4])  # candidate a
        at = lines.index(next(l for l in lines if l.startswith("  stage 1  b")))
        self.assertRegex(lines[at + 1], r"0\.2000 ms  gemm$")
        self.assertRegex(lines[at + 2], r"0\.0400 ms  epilogue$")
        # The event time (0.25) less the kernels' sum (0.24): launch gaps and the like.
        self.assertRegex(lines[at + 3], r"0\.0100 ms  \(event time less the kernels' sum, 0\.2400 ms\)")

    def test_no_match_is_an_error_that_says_where_it_looked(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.write_tree(tmp)
            rc, _, err = self.run_tool(tmp, "--op", "missing")
        self.assertEqual(rc, 1)
        self.assertIn("no manifest.json for missing under", err)


if __name__ == "__main__":
    unittest.main()
