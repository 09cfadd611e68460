"""The reference server (refserver.py) on the CPU: the protocol over a real Unix socket, the sets
it computes, its resident cache, and the op's faults reported at startup. CUDA IPC itself (the
handles) is exercised by the gpu tests (harness.gpu.*), where a GPU exists."""

import json
import os
import socket
import threading
import unittest

import torch

from frontend_util import TempOps

from egg_frontend import refserver, rng

OP = """
class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d))
    def forward(self, x):
        return torch.relu(x) * self.w
def get_inputs():
    return [torch.randn(4, 6)]
def get_init_inputs():
    return [6]
"""


def fake_export(t):
    return {"handle": "ab" * 64, "offset": 8}


class Protocol(TempOps, unittest.TestCase):
    def serve(self, refs):
        """A server thread on a socketpair; returns the client's file."""
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        thread = threading.Thread(target=refserver._serve_connection, args=(refs, b), daemon=True)
        thread.start()
        self.addCleanup(thread.join, 5)
        f = a.makefile("rwb")
        self.addCleanup(a.close)
        self.addCleanup(f.close)
        return f

    def ask(self, f, obj):
        f.write((json.dumps(obj) + "\n").encode())
        f.flush()
        return json.loads(f.readline())

    def refs(self, op=OP, seeds=3):
        r = self.trace(op, seeds=seeds)
        self.assertEqual(r.rc, 0, r.stderr)
        refs = refserver.References(r.op_path, r.spec, seeds, "cpu", serve_device="cpu",
                                    exporter=fake_export)
        refs.warm_up()
        return r, refs

    def test_info_set_release(self):
        r, refs = self.refs()
        f = self.serve(refs)
        self.assertEqual(self.ask(f, {"cmd": "info"}),
                         {"ok": True, "sets": 4, "device": "cpu", "compute_device": "cpu",
                          "need_bytes": 0})
        reply = self.ask(f, {"cmd": "set", "index": 2})
        self.assertTrue(reply["ok"], reply)
        self.assertEqual((reply["index"], reply["seed"], reply["declared"]), (2, 2, False))
        self.assertEqual(reply["inputs"], [{"name": "x", "dtype": "float32", "shape": [4, 6],
                                            "bytes": 96, "handle": "ab" * 64, "offset": 8}])
        self.assertEqual([p["name"] for p in reply["params"]], ["w"])
        self.assertEqual(reply["outputs"][0]["bytes"], 96)
        self.assertEqual(self.ask(f, {"cmd": "release", "index": 2}), {"ok": True})

    def test_dropout_sets_carry_their_random_state_and_draw_from_it(self):
        op = """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.drop = nn.Dropout(0.5)
            def forward(self, x):
                return self.drop(x * 2) + F.dropout(x, 0.25)
        def get_inputs():
            return [torch.randn(64, 32)]
        """
        r, refs = self.refs(op)
        f = self.serve(refs)
        reply = self.ask(f, {"cmd": "set", "index": 1})
        self.assertEqual([(i["name"], i["dtype"], i["shape"]) for i in reply["inputs"]],
                         [("x", "float32", [64, 32]), ("egg_rng", "int64", [2])])
        for k in (1, 2):
            s, _, _ = refs.compute(k)
            x, state = s["inputs"]
            self.assertTrue(torch.equal(state, rng.state(k, "cpu")))
            seed, offset = state.tolist()
            want = (rng.philox_dropout(x * 2, 0.5, seed, offset, 0) +
                    rng.philox_dropout(x, 0.25, seed, offset, 1))
            self.assertTrue(torch.equal(s["outputs"][0], want))
        self.assertFalse(torch.equal(refs.compute(1)[0]["outputs"][0],
                                     refs.compute(2)[0]["outputs"][0]))
        outs, why, _, _ = refs.exact(1)
        self.assertEqual(why, "")
        s, _, _ = refs.compute(1)
        self.assertTrue(torch.allclose(outs[0].float(), s["outputs"][0], atol=1e-6))

    def test_exact_is_the_model_computed_in_float64(self):
        op = """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(6, 5)
                self.register_buffer("scale", torch.full((5,), 3.0))
            def forward(self, x):
                # a tensor forward creates follows the default dtype (float64 in the twin)
                return self.lin(x) * self.scale + torch.ones(5)
        def get_inputs():
            return [torch.randn(4, 6)]
        """
        r, refs = self.refs(op)
        f = self.serve(refs)
        self.assertTrue(self.ask(f, {"cmd": "set", "index": 1})["ok"])
        reply = self.ask(f, {"cmd": "exact", "index": 1})
        self.assertTrue(reply["ok"], reply)
        self.assertEqual(reply["why"], "")
        self.assertEqual([(o["name"], o["dtype"], o["bytes"]) for o in reply["outputs"]],
                         [(r.spec["outputs"][0]["name"], "float64", 4 * 5 * 8)])
        outs, why, _, _ = refs.exact(1)
        s, _, _ = refs.compute(1)
        x64 = s["inputs"][0].double()
        w, b = refs.params[0].double(), refs.params[1].double()
        want = (x64 @ w.T + b) * 3.0 + 1.0
        self.assertEqual(outs[0].dtype, torch.float64)
        self.assertTrue(torch.allclose(outs[0], want, rtol=0, atol=1e-12))
        # the float32 reference is PyTorch's own float32 computation, unchanged
        self.assertEqual(s["outputs"][0].dtype, torch.float32)
        self.assertEqual(self.ask(f, {"cmd": "release", "index": 1}), {"ok": True})

    def test_exact_says_why_where_the_model_does_not_run_in_float64(self):
        op = """
        class Model(nn.Module):
            def forward(self, x):
                return x.float() * 2
        def get_inputs():
            return [torch.randn(4, 6)]
        """
        r, refs = self.refs(op)
        f = self.serve(refs)
        self.assertTrue(self.ask(f, {"cmd": "set", "index": 0})["ok"])
        reply = self.ask(f, {"cmd": "exact", "index": 0})
        self.assertTrue(reply["ok"], reply)
        self.assertIsNone(reply["outputs"])
        self.assertIn("stays float32 when the model runs in float64", reply["why"])
        # the failure changes nothing else: the float32 sets are still served
        self.assertTrue(self.ask(f, {"cmd": "set", "index": 1})["ok"])

    def test_bad_requests_are_answers(self):
        r, refs = self.refs()
        f = self.serve(refs)
        self.assertEqual(self.ask(f, {"cmd": "set", "index": 9})["kind"], "internal")
        self.assertEqual(self.ask(f, {"cmd": "dance", "index": 0})["kind"], "internal")
        self.assertTrue(self.ask(f, {"cmd": "set", "index": 0})["ok"])  # still serving

    def test_sets_are_the_models_outputs_under_each_seed(self):
        r, refs = self.refs()
        ns = {}
        with open(r.op_path, encoding="utf-8") as fh:
            exec(compile(fh.read(), r.op_path, "exec"), ns)
        torch.manual_seed(0)
        model = ns["Model"](6)
        for k in range(4):
            s = refs.compute(k)[0]
            torch.manual_seed(k)
            x = ns["get_inputs"]()[0]
            self.assertTrue(torch.equal(s["inputs"][0], x))
            with torch.no_grad():
                self.assertTrue(torch.equal(s["outputs"][0], model(x)))

    def test_small_sets_stay_resident_large_ones_are_computed_again(self):
        r, refs = self.refs()
        self.assertTrue(refs.keep)
        self.assertEqual(sorted(refs.cache), [0, 1, 2, 3])
        old = refserver.CACHE_BYTES
        refserver.CACHE_BYTES = 100  # less than the four sets
        self.addCleanup(setattr, refserver, "CACHE_BYTES", old)
        r, refs = self.refs()
        self.assertFalse(refs.keep)
        self.assertEqual(refs.cache, {})
        a, b = refs.compute(1)[0], refs.compute(1)[0]
        self.assertTrue(torch.equal(a["outputs"][0], b["outputs"][0]))  # the same, computed twice

    def test_buffers_are_restored_and_parameters_are_not_copied(self):
        # BatchNorm in training mode updates its running stats on every call: each set starts
        # from the stats as built. The weights are not copied for that (they can be gigabytes).
        op = """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = nn.BatchNorm1d(6)
                self.w = nn.Parameter(torch.randn(6))
            def forward(self, x):
                self.bn(x)  # only its running stats
                return x * self.w + self.bn.running_mean
        def get_inputs():
            return [torch.randn(4, 6)]
        """
        r, refs = self.refs(op)
        self.assertEqual(sorted(refs.op.initial_state),
                         ["bn.num_batches_tracked", "bn.running_mean", "bn.running_var"])
        self.assertEqual(sorted(refs.op.param_versions), ["bn.bias", "bn.weight", "w"])
        refs.cache.clear()
        a, b = refs.compute(1)[0], refs.compute(1)[0]
        self.assertTrue(torch.equal(a["outputs"][0], b["outputs"][0]))  # same stats each time

    def test_a_forward_that_changes_a_parameter_in_place_is_refused(self):
        op = """
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.ones(6))
            def forward(self, x):
                with torch.no_grad():
                    self.w.mul_(2)
                return x * self.w
        def get_inputs():
            return [torch.randn(4, 6)]
        """
        r = self.trace(op)
        if r.rc != 0:  # refused while tracing already (torch.export sees the mutation)
            self.assertNotIn("Traceback", r.stderr)
            return
        refs = refserver.References(r.op_path, r.spec, 3, "cpu", serve_device="cpu",
                                    exporter=fake_export)
        with self.assertRaises(refserver.UserError) as e:
            refs.warm_up()
        self.assertIn("changes the parameter w in place", e.exception.message)

    def test_a_forward_failing_on_a_seed_is_the_ops_fault_at_startup(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                return x + 1
        calls = [0]
        def get_inputs():
            calls[0] += 1
            return [torch.randn(4 if calls[0] <= 2 else 5, 3)]
        """, seeds=2)
        self.assertEqual(r.rc, 0, r.stderr)
        ready = os.path.join(self.tmp, "ready.json")
        sock = os.path.join(self.tmp, "s.sock")
        refs = refserver.References(r.op_path, r.spec, 2, "cpu", serve_device="cpu",
                                    exporter=fake_export)
        with self.assertRaises(refserver.UserError) as e:
            refs.warm_up()
        self.assertIn("get_inputs() must give the same shapes", e.exception.hint)
        self.assertFalse(os.path.exists(ready) or os.path.exists(sock))

    def test_number_inputs_are_the_traced_ones_on_every_seed(self):
        op = """
        class Model(nn.Module):
            def forward(self, x, s):
                return x * s
        calls = [0]
        def get_inputs():
            calls[0] += 1
            return [torch.randn(4, 3), 2.0 if calls[0] <= %d else 3.0]
        """
        # The same number on every set: the sets hold the tensors only, and outputs use it.
        r, refs = self.refs(op % 100, seeds=2)
        s, _, _ = refs.compute(1)
        self.assertEqual(len(s["inputs"]), 1)
        self.assertTrue(torch.equal(s["outputs"][0], s["inputs"][0] * 2.0))
        # Another number on a later set: the kernel is specialized to the traced one.
        r = self.trace(op % 2, seeds=2)
        self.assertEqual(r.rc, 0, r.stderr)
        refs = refserver.References(r.op_path, r.spec, 2, "cpu", serve_device="cpu",
                                    exporter=fake_export)
        with self.assertRaises(refserver.UserError) as e:
            refs.warm_up()
        self.assertIn("traced, and is generated, for [[1, 2.0]]", e.exception.message)

    def test_serve_without_a_gpu_writes_a_clear_failure(self):
        if torch.cuda.is_available():
            self.skipTest("a GPU is present")
        r = self.trace(OP)
        spec = os.path.join(r.out, "spec.json")
        ready = os.path.join(self.tmp, "ready.json")
        rc = refserver.serve(r.op_path, spec, os.path.join(self.tmp, "s.sock"), ready, 1, "cuda",
                             watch_parent=False)
        self.assertEqual(rc, 1)
        with open(ready, encoding="utf-8") as fh:
            doc = json.load(fh)
        self.assertFalse(doc["ok"])
        self.assertIn("no CUDA device", doc["message"])


if __name__ == "__main__":
    unittest.main()
