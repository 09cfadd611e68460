"""User errors: exit 1, error.json naming file/line/op, one stderr line, nothing else left."""

import json
import os
import subprocess
import sys
import unittest

from frontend_util import TempOps

PY_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "python"))


class UserErrors(TempOps, unittest.TestCase):
    def check(self, text, line, op, fragment, file=None, header=True):
        r = self.trace(text, header=header)
        self.assertEqual(r.rc, 1, r.stderr)
        self.assertEqual(r.files(), ["error.json"])
        e = r.error
        self.assertEqual(e["kind"], "user")
        self.assertEqual(e["file"], file or r.op_path)
        self.assertEqual(e["line"], line, e)
        self.assertEqual(e["op"], op)
        self.assertIn(fragment, e["message"])
        self.assertTrue(e["hint"])
        lines = r.stderr.splitlines()
        self.assertEqual(lines[0], "egg: error: %s:%d: %s: %s" % (e["file"], line, op,
                                                                  e["message"]))
        self.assertTrue(lines[1].startswith("egg: hint: "))
        return r

    def test_syntax_error(self):
        self.check("""
        import torch
        class Model(torch.nn.Module):
            def forward(self, x)
                return x
        """, 3, "syntax", "syntax error", header=False)

    def test_missing_get_inputs(self):
        self.check("""
        class Model(nn.Module):
            def forward(self, x):
                return x
        """, 1, "get_inputs", "get_inputs")

    def test_missing_model(self):
        self.check("""
        def get_inputs():
            return [torch.randn(2)]
        """, 1, "Model", "Model")

    def test_model_not_a_module(self):
        self.check("""
        class Model:
            pass
        def get_inputs():
            return [torch.randn(2)]
        """, 4, "Model", "nn.Module")

    def test_exception_in_constructor(self):
        self.check("""
        class Model(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.fc = nn.Linear(d, 4)
            def forward(self, x):
                return self.fc(x)
        def get_inputs():
            return [torch.randn(2)]
        def get_init_inputs():
            return [-3]
        """, 7, "Model", "RuntimeError")

    def test_exception_in_get_inputs(self):
        self.check("""
        class Model(nn.Module):
            def forward(self, x):
                return x
        def get_inputs():
            a = torch.randn(2)
            raise ValueError("bad input")
        """, 9, "get_inputs", "ValueError: bad input")

    def test_exception_at_import(self):
        self.check("""
        import does_not_exist_egg
        """, 4, "import", "ModuleNotFoundError")

    def test_data_dependent_control_flow(self):
        self.check("""
        class Model(nn.Module):
            def forward(self, x):
                y = x * 2
                if y.sum() > 0:
                    return y
                return -y
        def get_inputs():
            return [torch.randn(4)]
        """, 7, "forward", "data-dependent control flow")

    def test_control_flow_in_helper_names_helper(self):
        helper = self.write("helpers.py", """
        def pick(x):
            if x.max() > 1:
                return x
            return x * 2
        """)
        self.check("""
        from helpers import pick
        class Model(nn.Module):
            def forward(self, x):
                return pick(x)
        def get_inputs():
            return [torch.randn(4)]
        """, 5, "forward", "control flow", file=os.path.realpath(helper))

    def test_non_tensor_output(self):
        self.check("""
        class Model(nn.Module):
            def forward(self, x):
                y = torch.relu(x)
                return y.shape[0]
        def get_inputs():
            return [torch.randn(4)]
        """, 7, "output", "not a tensor")

    def test_constant_output_in_tuple(self):
        self.check("""
        class Model(nn.Module):
            def forward(self, x):
                return torch.relu(x), 3.0
        def get_inputs():
            return [torch.randn(4)]
        """, 6, "output", "output 1 is float")

    def test_non_tensor_forward_input(self):
        self.check("""
        class Model(nn.Module):
            def forward(self, x, n):
                return x * n
        def get_inputs():
            return [torch.randn(4), "3"]
        """, 7, "get_inputs", "forward input 1 is str, not a tensor or a number")

    def test_wrong_number_of_inputs(self):
        self.check("""
        class Model(nn.Module):
            def forward(self, x, y):
                return x * y
        def get_inputs():
            return [torch.randn(4)]
        """, 7, "get_inputs", "returns 1 tensors but forward takes 2")

    def test_shape_error_names_node(self):
        self.check("""
        class Model(nn.Module):
            def forward(self, x, y):
                z = torch.relu(x)
                return torch.matmul(z, y)
        def get_inputs():
            return [torch.randn(2, 3), torch.randn(2, 3)]
        """, 7, "matmul", "RuntimeError")

    def test_failed_run_removes_previous_outputs(self):
        ok = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                return x.exp()
        def get_inputs():
            return [torch.randn(4)]
        """)
        self.assertEqual(ok.rc, 0)
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                return x.exp()
        def get_inputs():
            return [torch.randn(4), 1]
        """)
        # (a get_inputs() that fails only under a seed beyond the declared one is the reference
        # server's to find: test_refserver.py)
        self.assertEqual(r.rc, 1)
        self.assertEqual(r.files(), ["error.json"])
        self.assertEqual(r.error["line"], 7)


class Subprocess(TempOps, unittest.TestCase):
    def test_error_exit_and_stderr(self):
        path = self.write("op.py", """
        class Model(nn.Module):
            def forward(self, x):
                return x
        """)
        out = os.path.join(self.tmp, "out")
        env = dict(os.environ, PYTHONPATH=PY_DIR)
        p = subprocess.run([sys.executable, "-m", "egg_frontend", "trace", "--op", path,
                            "--out", out], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 1)
        self.assertTrue(p.stderr.startswith("egg: error: %s:1: get_inputs: " % path), p.stderr)
        with open(os.path.join(out, "error.json"), encoding="utf-8") as f:
            self.assertEqual(json.load(f)["op"], "get_inputs")
        self.assertEqual(os.listdir(out), ["error.json"])


if __name__ == "__main__":
    unittest.main()


class InternalErrors(TempOps, unittest.TestCase):
    def test_bug_in_frontend_exits_2(self):
        from egg_frontend import spec

        def broken(*args, **kwargs):
            raise ZeroDivisionError("boom")

        saved = spec.build
        spec.build = broken
        try:
            r = self.trace("""
            class Model(nn.Module):
                def forward(self, x):
                    return x.exp()
            def get_inputs():
                return [torch.randn(4)]
            """)
        finally:
            spec.build = saved
        self.assertEqual(r.rc, 2)
        self.assertEqual(r.error["kind"], "internal")
        self.assertIn("ZeroDivisionError: boom", r.error["message"])
        self.assertEqual(r.files(), ["error.json"])
        self.assertTrue(r.stderr.startswith("egg: error: "))


class HelperErrors(TempOps, unittest.TestCase):
    def test_error_while_importing_helper_names_helper_line(self):
        helper = self.write("badhelper.py", """
        X = 1
        raise RuntimeError("helper broke")
        """)
        r = self.trace("""
        import badhelper
        class Model(nn.Module):
            def forward(self, x):
                return x
        def get_inputs():
            return [torch.randn(2)]
        """)
        self.assertEqual(r.rc, 1, r.stderr)
        self.assertEqual(r.error["file"], os.path.realpath(helper))
        self.assertEqual(r.error["line"], 5)
        self.assertIn("helper broke", r.error["message"])
