"""tools/gen_coverage.py: outcomes, classes, the time limit and the summary, with a fake egg-gen."""
import json
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

_TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "gen_coverage.py")

# Behaves by the op file's stem, as egg-gen would report each outcome (exit 0/1/2, stderr lines).
_FAKE = textwrap.dedent("""\
    #!{python}
    import os, sys, time
    args = sys.argv[1:]
    assert args[0] == "generate", args
    for flag in ("--no-verify", "--no-cache"):
        assert flag in args, args
    assert args[args.index("--arch") + 1] == "sm_90", args
    out = args[args.index("--out") + 1]
    stem = os.path.splitext(os.path.basename(args[1]))[0]
    if stem.endswith("ok"):
        os.makedirs(out)
        open(os.path.join(out, stem + ".cu"), "w").close()
        sys.exit(0)
    if stem.endswith("unsupported"):
        sys.stderr.write("egg: error: " + args[1] + ":12: aten.triu: the builtin backend cannot "
                         "generate a kernel for `aten.triu`\\negg: hint: use ...\\n")
        sys.exit(1)
    if stem.endswith("nvcc"):
        sys.stderr.write("egg: error: stage1: no candidate passed (2 tried)\\n  a: compile_error: "
                         "error: identifier x\\n")
        sys.exit(1)
    if stem.endswith("internal"):
        sys.stderr.write("egg: error: internal: vector::at (please report this as a bug in EGG)\\n")
        sys.exit(2)
    if stem.endswith("scalar"):
        sys.stderr.write("egg: error: " + args[1] + ":27: get_inputs: forward input 1 is float, "
                         "not a tensor\\n")
        sys.exit(1)
    if stem.endswith("slow"):
        time.sleep(60)
    sys.exit(3)
    """)


class GenCoverageTest(unittest.TestCase):
    def run_tool(self, tmp, ops, *extra):
        fake = os.path.join(tmp, "egg-gen")
        with open(fake, "w") as f:
            f.write(_FAKE.format(python=sys.executable))
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)
        folder = os.path.join(tmp, "level9")
        os.makedirs(folder, exist_ok=True)
        for op in ops:
            open(os.path.join(folder, op + ".py"), "w").close()
        rows, md = os.path.join(tmp, "rows.jsonl"), os.path.join(tmp, "summary.md")
        subprocess.run([sys.executable, _TOOL, folder, "--egg-gen", fake, "--jsonl", rows,
                        "--markdown", md, *extra], check=True, capture_output=True, text=True)
        with open(rows) as f:
            by_op = {os.path.basename(r["op"]): r for r in map(json.loads, f)}
        with open(md) as f:
            return by_op, f.read()

    def test_outcomes_classes_and_summary(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows, md = self.run_tool(tmp, ["1_ok", "2_unsupported", "3_nvcc", "4_internal",
                                           "10_unsupported"], "-j", "2")
        self.assertEqual(rows["1_ok.py"]["outcome"], "ok")
        self.assertEqual(rows["2_unsupported.py"]["outcome"], "user_error")
        self.assertEqual(rows["2_unsupported.py"]["class"], "unsupported op aten.triu")
        self.assertIn(":12: aten.triu: the builtin backend", rows["2_unsupported.py"]["message"])
        self.assertEqual(rows["3_nvcc.py"]["outcome"], "no_candidate")
        self.assertEqual(rows["3_nvcc.py"]["class"], "no candidate passed: nvcc compile error")
        self.assertEqual(rows["4_internal.py"]["outcome"], "internal_error")
        self.assertEqual(rows["4_internal.py"]["exit_code"], 2)
        self.assertIn("| level9 | 5 | 1 | 2 | 1 | 1 | 0 | 20 % |", md)
        self.assertIn("| unsupported op aten.triu | 2 | 2_unsupported, 10_unsupported |", md)

    def test_frontend_class_and_a_missing_egg_gen(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows, _ = self.run_tool(tmp, ["1_scalar"])
            self.assertEqual(rows["1_scalar.py"]["class"], "frontend: non-tensor forward input")
            # An egg-gen that cannot start is that op's internal error; the run goes on.
            out = subprocess.run([sys.executable, _TOOL, os.path.join(tmp, "level9"), "--egg-gen",
                                  os.path.join(tmp, "missing")], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        row = json.loads(out.stdout.splitlines()[0])
        self.assertEqual((row["outcome"], row["class"]), ("internal_error", "cannot run egg-gen"))

    def test_sample_every_nth_by_number(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows, _ = self.run_tool(tmp, ["1_ok", "2_ok", "10_ok", "3_ok", "4_ok"],
                                    "--every", "2", "--offset", "1")
        self.assertEqual(sorted(rows), ["2_ok.py", "4_ok.py"])  # 1, 2, 3, 4, 10: the 2nd and 4th

    def test_time_limit_kills_the_op(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows, md = self.run_tool(tmp, ["1_slow"], "--timeout", "1")
        self.assertEqual(rows["1_slow.py"]["outcome"], "timeout")
        self.assertLess(rows["1_slow.py"]["seconds"], 30)
        self.assertIn("| timeout | 1 | 1_slow |", md)


if __name__ == "__main__":
    unittest.main()
