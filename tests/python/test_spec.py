"""spec.json structure, shapes and dtypes, reference sets (the reference server's, on the CPU
here) and deps."""

import json
import os
import subprocess
import sys
import unittest

import torch

from frontend_util import TempOps

PY_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "python"))


class SpecShape(TempOps, unittest.TestCase):
    def test_top_level_fields_and_reference(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                return torch.relu(x)
        batch, dim = 4, 8
        def get_inputs():
            return [torch.randn(batch, dim)]
        def get_init_inputs():
            return []
        """, seeds=3)
        self.assertEqual(r.rc, 0, r.stderr)
        s = r.spec
        self.assertEqual(s["schema"], 2)
        self.assertEqual(s["op_file"], r.op_path)
        self.assertEqual(s["model_class"], "Model")
        self.assertEqual(s["init_inputs"], [])
        self.assertEqual(s["inputs"], [{"name": "x", "shape": [4, 8], "dtype": "float32"}])
        self.assertEqual(s["params"], [])
        self.assertEqual(s["nodes"][0]["target"], "aten.relu.default")
        self.assertEqual(s["nodes"][0]["code"], "return torch.relu(x)")
        self.assertEqual(s["nodes"][0]["line"], 6)
        self.assertEqual(s["outputs"], [{"name": "out0", "node": "relu", "shape": [4, 8],
                                         "dtype": "float32"}])
        self.assertEqual(s["deps"], [r.op_path])
        self.assertEqual(s["reference"], {"seeds": 3})
        # Nothing but the spec: reference tensors never go through the disk.
        self.assertEqual(r.files(), ["spec.json", "trace_times.json"])

    def test_a_number_forward_input_is_specialized(self):
        # KernelBench's `A * s` with s from get_inputs(): the kernel is generated for the value, as
        # for the shapes; the reference server checks every set gives it.
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, a, s):
                return a * s
        def get_inputs():
            return [torch.randn(4, 8), 3.14]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        s = r.spec
        self.assertEqual(s["inputs"], [{"name": "a", "shape": [4, 8], "dtype": "float32"}])
        self.assertEqual(s["nodes"][0]["op"], "mul")
        self.assertEqual(s["nodes"][0]["args"], [{"node": "a"}, {"scalar": 3.14}])
        self.assertEqual(s["reference"]["numbers"], [[1, 3.14]])

    def test_missing_get_init_inputs_is_empty(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                return x.exp()
        def get_inputs():
            return [torch.randn(3)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(r.spec["init_inputs"], [])

    def test_dtypes(self):
        for dtype in ("float32", "float16", "bfloat16"):
            with self.subTest(dtype=dtype):
                r = self.trace("""
                class Model(nn.Module):
                    def forward(self, x, y):
                        return F.silu(x) * y + 1.0
                def get_inputs():
                    return [torch.randn(4, 8, dtype=torch.DT), torch.randn(4, 8, dtype=torch.DT)]
                """.replace("DT", dtype))
                self.assertEqual(r.rc, 0, r.stderr)
                self.assertEqual([i["dtype"] for i in r.spec["inputs"]], [dtype, dtype])
                self.assertTrue(all(n["dtype"] == dtype for n in r.spec["nodes"]))
                self.assertEqual(r.spec["outputs"][0]["dtype"], dtype)
                ref = references(r).compute(0)[0]
                self.assertEqual(ref["outputs"][0].dtype, getattr(torch, dtype))

    def test_broadcasting_shapes(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x, b, s):
                return torch.maximum(x + b, s)
        def get_inputs():
            return [torch.randn(2, 3, 4), torch.randn(4), torch.randn(2, 1, 1)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual([i["shape"] for i in r.spec["inputs"]], [[2, 3, 4], [4], [2, 1, 1]])
        add, mx = r.spec["nodes"]
        self.assertEqual(add["shape"], [2, 3, 4])
        self.assertEqual(mx["args"], [{"node": "add"}, {"node": "s"}])
        self.assertEqual(r.spec["outputs"][0]["shape"], [2, 3, 4])

    def test_multiple_outputs_tuple_and_list(self):
        for ret in ("torch.relu(x), torch.sigmoid(x), x", "[x * 2, x - 1]"):
            with self.subTest(ret=ret):
                r = self.trace("""
                class Model(nn.Module):
                    def forward(self, x):
                        return RET
                def get_inputs():
                    return [torch.randn(5)]
                """.replace("RET", ret))
                self.assertEqual(r.rc, 0, r.stderr)
                outs = r.spec["outputs"]
                self.assertEqual([o["name"] for o in outs],
                                 ["out%d" % i for i in range(len(outs))])
                names = {n["name"] for n in r.spec["nodes"]} | {"x"}
                self.assertTrue(all(o["node"] in names for o in outs))
                ref = references(r).compute(0)[0]
                self.assertEqual(len(ref["outputs"]), len(outs))


class References(TempOps, unittest.TestCase):
    OP = """
    class Model(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc = nn.Linear(d, d)
            self.register_buffer("scale", torch.full((d,), 0.5))
        def forward(self, x):
            return F.gelu(self.fc(x)) * self.scale
    def get_inputs():
        return [torch.randn(3, 6).t()]
    def get_init_inputs():
        return [3]
    """

    def test_refs_match_model(self):
        r = self.trace(self.OP, seeds=2)
        self.assertEqual(r.rc, 0, r.stderr)
        refs = references(r, seeds=2)
        self.assertEqual([p["name"] for p in r.spec["params"]], ["fc.weight", "fc.bias", "scale"])
        # rebuild the model the same way and compare
        ns = {}
        with open(r.op_path, encoding="utf-8") as f:
            exec(compile(f.read(), r.op_path, "exec"), ns)
        torch.manual_seed(0)
        model = ns["Model"](*ns["get_init_inputs"]())
        state = model.state_dict()
        for decl, t in zip(r.spec["params"], refs.params):
            self.assertTrue(torch.equal(state[decl["name"]], t), decl["name"])
        for k in range(3):
            ref = refs.compute(k)[0]
            torch.manual_seed(k)
            inputs = ns["get_inputs"]()
            self.assertEqual(len(ref["inputs"]), 1)
            self.assertTrue(torch.equal(ref["inputs"][0], inputs[0]))
            self.assertTrue(ref["inputs"][0].is_contiguous())
            with torch.no_grad():
                expected = model(*inputs)
            self.assertTrue(torch.equal(ref["outputs"][0], expected))
        s0, s1 = refs.compute(0)[0]["inputs"][0], refs.compute(1)[0]["inputs"][0]
        self.assertFalse(torch.equal(s0, s1))

    def test_inplace_on_input_does_not_change_served_inputs(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                x.mul_(2.0)
                return x + 1.0
        def get_inputs():
            return [torch.ones(4)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ref = references(r).compute(0)[0]
        self.assertTrue(torch.equal(ref["inputs"][0], torch.ones(4)))
        self.assertTrue(torch.equal(ref["outputs"][0], torch.full((4,), 3.0)))
        add = r.spec["nodes"][-1]
        self.assertEqual(add["args"][0], {"node": r.spec["nodes"][0]["name"]})


def references(r, seeds=1):
    """The reference server's sets for a traced op, computed and served on the CPU."""
    from egg_frontend import refserver
    return refserver.References(r.op_path, r.spec, seeds, "cpu", serve_device="cpu",
                                exporter=lambda t: {"handle": "00" * 64, "offset": 0})


class Deps(TempOps, unittest.TestCase):
    def test_local_helpers_are_deps(self):
        self.write("helpers.py", """
        import torch
        from pkg import act
        def scale(x):
            return act.double(x) * 0.5
        """)
        self.write("pkg/__init__.py", "")
        self.write("pkg/act.py", """
        def double(x):
            return x + x
        """)
        r = self.trace("""
        import json, collections
        from helpers import scale
        class Model(nn.Module):
            def forward(self, x):
                return scale(torch.relu(x))
        def get_inputs():
            return [torch.randn(4)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        expected = sorted(os.path.realpath(os.path.join(self.tmp, p)) for p in (
            "op.py", "helpers.py", "pkg/__init__.py", "pkg/act.py"))
        self.assertEqual(r.spec["deps"], expected)
        ops = [n["op"] for n in r.spec["nodes"]]
        self.assertEqual(ops, ["relu", "add", "mul"])
        add = r.spec["nodes"][1]
        self.assertEqual(add["file"], os.path.realpath(os.path.join(self.tmp, "pkg/act.py")))
        self.assertEqual(add["code"], "return x + x")

    def test_same_helper_name_in_another_dir_is_reloaded(self):
        for i, factor in enumerate((2.0, 3.0)):
            sub = "d%d" % i
            self.write(sub + "/helpers.py", "FACTOR = %r\n" % factor)
            path = self.write(sub + "/op.py", """
            from helpers import FACTOR
            class Model(nn.Module):
                def forward(self, x):
                    return x * FACTOR
            def get_inputs():
                return [torch.randn(4)]
            """)
            r = self.trace(path=path, out="out%d" % i)
            self.assertEqual(r.rc, 0, r.stderr)
            self.assertEqual(r.spec["nodes"][0]["args"][1], {"scalar": factor})
            self.assertIn(os.path.realpath(os.path.join(self.tmp, sub, "helpers.py")),
                          r.spec["deps"])


class Subprocess(TempOps, unittest.TestCase):
    def test_command_line(self):
        path = self.write("op.py", """
        class Model(nn.Module):
            def forward(self, x):
                return torch.tanh(x)
        def get_inputs():
            return [torch.randn(4)]
        """)
        out = os.path.join(self.tmp, "out")
        env = dict(os.environ, PYTHONPATH=PY_DIR)
        p = subprocess.run([sys.executable, "-m", "egg_frontend", "trace", "--op", path,
                            "--out", out], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "spec.json"), encoding="utf-8") as f:
            spec = json.load(f)
        self.assertEqual(spec["nodes"][0]["op"], "tanh")
        self.assertEqual(spec["reference"], {"seeds": 3})  # default --seeds 3
        self.assertEqual(p.stdout, "")
        # Where the time went, beside the spec (not in it: the spec's bytes are the cache key's).
        with open(os.path.join(out, "trace_times.json"), encoding="utf-8") as f:
            times = json.load(f)
        self.assertEqual(sorted(times), ["capture", "import", "inputs", "model", "spec"])
        self.assertTrue(all(v >= 0 for v in times.values()), times)
        self.assertNotIn("times", json.dumps(spec))


if __name__ == "__main__":
    unittest.main()


class ForwardSignatures(TempOps, unittest.TestCase):
    def test_default_argument_is_a_constant(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x, dim: int = 1, scale=0.5):
                return torch.softmax(x, dim=dim) * scale
        def get_inputs():
            return [torch.randn(2, 3)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual([i["name"] for i in r.spec["inputs"]], ["x"])
        sm, mul = r.spec["nodes"]
        self.assertEqual(sm["attrs"]["dim"], 1)
        self.assertEqual(mul["args"], [{"node": "softmax"}, {"scalar": 0.5}])

    def test_loop_over_rows_is_unrolled(self):
        # the rows of a tensor are known at the declared shapes: torch.export unrolls the loop
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                acc = 0
                for row in x:
                    acc = acc + row
                return acc
        def get_inputs():
            return [torch.randn(2, 3)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ops = [n["op"] for n in r.spec["nodes"]]  # unbind, decomposed into view ops
        self.assertEqual((sorted(set(ops)), ops.count("add")), (["add", "slice", "squeeze"], 2))
        self.assertEqual(r.spec["nodes"][1]["attrs"], {"dim": 0, "start": 1, "end": 2, "step": 1})

    def test_loop_on_tensor_value_is_control_flow(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                acc = x
                while acc.max() > 0:
                    acc = acc - 1
                return acc
        def get_inputs():
            return [torch.randn(2, 3)]
        """)
        self.assertEqual(r.rc, 1)
        self.assertEqual(r.error["op"], "forward")
        self.assertEqual(r.error["line"], 7)
        self.assertIn("control flow", r.error["message"])


class Values(TempOps, unittest.TestCase):
    def test_infinite_constant_becomes_dbl_max(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                return torch.clamp(x, min=float('-inf'), max=2.0)
        def get_inputs():
            return [torch.randn(4)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(r.spec["nodes"][0]["attrs"], {"min": -sys.float_info.max, "max": 2.0})

    def test_unsupported_input_dtype_is_user_error(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                return x * 2
        def get_inputs():
            return [torch.randn(4, dtype=torch.complex64)]
        """)
        self.assertEqual(r.rc, 1, r.stderr)
        self.assertEqual((r.error["op"], r.error["line"]), ("get_inputs", 7))
        self.assertIn("complex64", r.error["message"])
        self.assertEqual(r.files(), ["error.json"])


class State(TempOps, unittest.TestCase):
    def test_batchnorm_buffers_saved_as_built_and_sets_independent(self):
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm1d(3)
            def forward(self, x):
                return self.bn(x)
        def get_inputs():
            return [torch.randn(8, 3) * 5 + 2]
        """, seeds=2)
        self.assertEqual(r.rc, 0, r.stderr)
        refs = references(r, seeds=2)
        params = {d["name"]: t for d, t in zip(r.spec["params"], refs.params)}
        # A forward in training mode updates the running stats; the served params are as built.
        refs.compute(0), refs.compute(1)
        self.assertTrue(torch.equal(params["bn.running_mean"], torch.zeros(3)))
        self.assertTrue(torch.equal(params["bn.running_var"], torch.ones(3)))
        self.assertEqual(params["bn.num_batches_tracked"].item(), 0)
        kinds = {p["name"]: p["kind"] for p in r.spec["params"]}
        self.assertEqual(kinds["bn.running_mean"], "buffer")
        self.assertEqual(r.spec["nodes"][0]["attrs"]["training"], True)

    def test_missing_op_file(self):
        r = self.trace(path=os.path.join(self.tmp, "nope.py"))
        self.assertEqual(r.rc, 1)
        self.assertEqual(r.error["op"], "op.py")
