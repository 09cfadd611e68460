"""python/egg_report without a browser: what it reads, what the page says, its user errors."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixtures  # noqa: E402

try:
    import matplotlib  # noqa: F401
except ImportError:
    if not os.environ.get("CI"):
        raise unittest.SkipTest("matplotlib is not installed") from None
    raise

from egg_report import __main__ as cli  # noqa: E402

ROWS = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "perf",
                    "2026-11-30-final-a-rows.jsonl")


class ReportTest(unittest.TestCase):
    def report(self, source, html):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = cli.main([source, "--html", html])
        return rc, err.getvalue()

    def test_a_rows_file_gives_the_bench_plots_and_table(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, err = self.report(ROWS, os.path.join(tmp, "r.html"))
            self.assertEqual(rc, 0, err)
            text = open(os.path.join(tmp, "r.html")).read()
        self.assertIn('<figure class="plot" id="speedups"><svg', text)
        self.assertIn('<figure class="plot" id="roofline"><svg', text)
        self.assertIn("device time", text)  # the rows carry device-time speedups
        self.assertIn(">red_prod_rows<", text)
        self.assertNotIn("<?xml", text)

    def test_a_kernel_folder_shows_verification_and_each_candidate(self):
        with tempfile.TemporaryDirectory() as tmp:
            k = os.path.join(tmp, "out")
            os.makedirs(k)
            with open(os.path.join(k, "manifest.json"), "w") as f:
                json.dump(fixtures.manifest("gelu", "gelu.s1", "gelu.s2"), f)
            rc, err = self.report(k, os.path.join(tmp, "k.html"))
            self.assertEqual(rc, 0, err)
            text = open(os.path.join(tmp, "k.html")).read()
        self.assertNotIn('id="bench"', text)
        self.assertIn('id="candidates-gelu"><svg', text)
        self.assertIn('<span class="ok">verified</span>', text)
        self.assertIn("gelu.broken", text)  # a failed candidate is in the table
        self.assertIn("compile_error", text)
        self.assertIn("stage time", text)

    def test_a_kernel_generated_without_a_gpu_says_nothing_was_measured(self):
        m = fixtures.manifest("k", "a", "b")
        for stage in m["stages"]:
            for a in stage.get("attempts", []):
                a["profile"] = {}
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "k"))
            with open(os.path.join(tmp, "k", "manifest.json"), "w") as f:
                json.dump(m, f)
            rc, _ = self.report(tmp, os.path.join(tmp, "k.html"))
            text = open(os.path.join(tmp, "k.html")).read()
        self.assertEqual(rc, 0)
        self.assertIn('id="candidates-k-missing"', text)

    def test_a_broken_rows_line_is_a_user_error_naming_the_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows = os.path.join(tmp, "rows.jsonl")
            with open(rows, "w") as f:
                f.write('{"op": "a"}\n{not json\n')
            rc, err = self.report(rows, os.path.join(tmp, "x.html"))
            self.assertEqual(rc, 1)
            self.assertIn("rows.jsonl:2 is not a JSON row", err)
            self.assertIn("egg: hint: ", err)
            self.assertFalse(os.path.exists(os.path.join(tmp, "x.html")))


if __name__ == "__main__":
    unittest.main()
