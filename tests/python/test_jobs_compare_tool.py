"""tools/jobs_compare.py: the verdicts of two bench runs of the same ops (issue 11's -j N against
-j 1 check) side by side, exit status 1 when one differs."""
import contextlib
import importlib.util
import io
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

_TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "jobs_compare.py")
_spec = importlib.util.spec_from_file_location("jobs_compare", _TOOL)
jobs_compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(jobs_compare)


def row(op, verified, status="verified", candidate="c", generate_s=10.0):
    return {"op": op, "verified": verified, "status": status, "candidate": candidate,
            "generate_s": generate_s}


class JobsCompareTest(unittest.TestCase):
    def run_tool(self, many, one):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for name, rows in (("many", many), ("one", one)):
                paths.append(os.path.join(d, name + ".jsonl"))
                with open(paths[-1], "w") as f:
                    f.writelines(json.dumps(r) + "\n" for r in rows)
            out = io.StringIO()
            with mock.patch.object(sys, "argv", ["jobs_compare.py"] + paths), \
                    contextlib.redirect_stdout(out):
                rc = jobs_compare.main()
        return rc, out.getvalue()

    def test_same_verdicts_other_winners_and_times(self):
        rc, text = self.run_tool(
            [row("a", True, candidate="x", generate_s=150), row("b", False, "failed: dropout: x y")],
            [row("a", True, candidate="y", generate_s=40), row("b", False, "failed: dropout: x y")])
        self.assertEqual(rc, 0, text)
        self.assertIn("compared 2 ops: 0 verdicts differ", text)

    def test_a_different_verdict_is_named_and_fails(self):
        rc, text = self.run_tool([row("a", False, "timeout: the candidate ran 30 s"), row("c", True)],
                                 [row("a", True)])
        self.assertEqual(rc, 1)
        self.assertIn("compared 1 ops: 1 verdicts differ", text)
        self.assertIn("DIFFERENT: NOT: timeout: the candidate ran 30 s | verified", text)
        self.assertIn("finished only at -j 12: c", text)


if __name__ == "__main__":
    unittest.main()
