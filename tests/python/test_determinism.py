"""Non-determinism: a forward that draws random numbers from PyTorch's generator is a user error
naming the line (F.dropout in training mode is EGG's own: test_rng.py); one that changes its input
or its state in place traces, with a warning naming the line."""

import json
import unittest

from egg_frontend import loader, spec
from frontend_util import TempOps


class RandomForward(TempOps, unittest.TestCase):
    def refused(self, body, op, init=""):
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                %s
            def forward(self, x):
                return %s
        def get_inputs():
            return [torch.randn(8, 8)]
        """ % (init or "pass", body))
        self.assertEqual(r.rc, 1, r.stderr)
        self.assertEqual(r.files(), ["error.json"])
        self.assertEqual(r.error["kind"], "user")
        self.assertEqual(r.error["op"], op)
        self.assertEqual(r.error["line"], 9, r.error)  # the return line (after the 3-line header)
        self.assertIn("forward draws random numbers", r.error["message"])
        return r

    def test_a_random_tensor_made_while_tracing_is_not_frozen_into_the_kernel(self):
        self.refused("x + torch.rand(8, 8)", "rand")

    def test_random_ops_on_traced_values(self):
        self.refused("x * torch.rand_like(x)", "rand_like")
        self.refused("torch.bernoulli(torch.sigmoid(x))", "bernoulli")

    def test_dropout_egg_cannot_draw_names_the_way_it_can(self):
        # F.dropout / nn.Dropout are captured (test_rng.py); torch.dropout and channel dropout
        # draw from PyTorch's generator.
        for body, op in (("torch.dropout(x, 0.5, True)", "dropout"),
                         ("F.dropout1d(x, 0.5, training=True)", "feature_dropout")):
            r = self.refused(body, op)
            self.assertIn("F.dropout, nn.Dropout or attention", r.error["hint"])
            self.assertIn("self.eval()", r.error["hint"])

    def test_no_randomness_traces(self):
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.rand(8))  # random at build time: fine
                self.drop = nn.Dropout(0.5)
                self.eval()
            def forward(self, x):
                return self.drop(x) * self.w
        def get_inputs():
            return [torch.rand(8, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertNotIn("warning", r.stderr)


class MutatedInput(TempOps, unittest.TestCase):
    def test_an_in_place_change_of_an_input_warns_with_its_line(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x, y):
                x.mul_(2)
                return x + y
        def get_inputs():
            return [torch.randn(8, 8), torch.randn(8, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertIn("egg: warning: %s:6: forward: forward changes its input x in place "
                      "(x.mul_(2))" % r.op_path, r.stderr)

    def test_an_unchanged_input_does_not_warn(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                y = x.clone()
                y.mul_(2)
                return y
        def get_inputs():
            return [torch.randn(8, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertNotIn("warning", r.stderr)


class MutatedState(TempOps, unittest.TestCase):
    def test_a_tensor_attribute_that_forward_overwrites_traces_with_a_warning(self):
        # A recurrent cell's hidden state as a plain tensor attribute (not a buffer), overwritten
        # from an input and then reassigned: torch.export refuses a mutated constant, so it
        # becomes a buffer; the output reads the copied input, never the stale state.
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.hidden = torch.randn(4, 8)
                self.i2h = nn.Linear(16, 8)
            def forward(self, x, h0):
                self.hidden.copy_(h0)
                self.hidden = torch.tanh(self.i2h(torch.cat((x, self.hidden), dim=1)))
                return self.hidden * 2.0
        def get_inputs():
            return [torch.randn(4, 8), torch.randn(4, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertIn("forward changes the model's state self.hidden", r.stderr)
        ops = [n["op"] for n in r.spec["nodes"]]
        self.assertNotIn("copy", ops)
        self.assertIn("cat", ops)
        cat = next(n for n in r.spec["nodes"] if n["op"] == "cat")
        # The cat's second operand comes from h0 (through the copy's clone), not from a buffer.
        self.assertNotIn("hidden", json.dumps(cat["args"]))

    def test_many_changed_buffers_are_one_warning(self):
        # Two BatchNorms in training mode update six buffers: one warning names the first three.
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.BatchNorm2d(3)
                self.b = nn.BatchNorm2d(3)
            def forward(self, x):
                return self.b(self.a(x))
        def get_inputs():
            return [torch.randn(4, 3, 5, 5)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(r.stderr.count("changes the model's state"), 1, r.stderr)
        self.assertIn("self.a.running_mean, self.a.running_var, self.a.num_batches_tracked "
                      "and 3 more", r.stderr)

    def test_the_reference_server_lists_the_params_in_the_tracers_order(self):
        # A plain tensor attribute in an early submodule and a real buffer in a later one: both
        # processes build the model through the loader, so the moved attribute sits in the same
        # place (the reference server matches the spec's params by position and shape).
        r = self.trace("""
        class Holder(nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = torch.full((8,), 2.0)
            def forward(self, x):
                return x * self.scale
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = Holder()
                self.bn = nn.BatchNorm1d(8)
            def forward(self, x):
                return self.bn(self.a(x))
        def get_inputs():
            return [torch.randn(4, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        traced = [p["name"] for p in r.spec["params"]]
        self.assertIn("a.scale", traced)
        op = loader.load(r.op_path)
        loader.build_model(op)
        served = [n for n, _, _ in spec.collect_params(op.model, traced)]
        self.assertEqual(served, traced)


if __name__ == "__main__":
    unittest.main()
