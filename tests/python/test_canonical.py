"""Canonical op names and attrs for every spelling of the element-wise family and anchors."""

import json
import unittest

from frontend_util import TempOps

X, Y = {"node": "x"}, {"node": "y"}


def S(v):
    return {"scalar": v}


# (forward expression, module init code, canonical op, attrs, args); args None = [x]
ELEMENTWISE = [
    ("torch.relu(x)", "", "relu", {}, None),
    ("F.relu(x)", "", "relu", {}, None),
    ("F.relu(x, inplace=True)", "", "relu", {}, None),
    ("x.relu()", "", "relu", {}, None),
    ("torch.relu_(x * 1)", "", "relu", {}, [{"node": "mul"}]),
    ("self.m(x)", "self.m = nn.ReLU()", "relu", {}, None),
    ("self.m(x)", "self.m = nn.ReLU(inplace=True)", "relu", {}, None),
    ("F.leaky_relu(x)", "", "leaky_relu", {"negative_slope": 0.01}, None),
    ("F.leaky_relu(x, 0.2)", "", "leaky_relu", {"negative_slope": 0.2}, None),
    ("F.leaky_relu(x, negative_slope=0.3, inplace=True)", "", "leaky_relu",
     {"negative_slope": 0.3}, None),
    ("self.m(x)", "self.m = nn.LeakyReLU()", "leaky_relu", {"negative_slope": 0.01}, None),
    ("self.m(x)", "self.m = nn.LeakyReLU(0.1)", "leaky_relu", {"negative_slope": 0.1}, None),
    ("F.gelu(x)", "", "gelu", {"approximate": "none"}, None),
    ("torch.nn.functional.gelu(x, approximate='tanh')", "", "gelu", {"approximate": "tanh"},
     None),
    ("self.m(x)", "self.m = nn.GELU()", "gelu", {"approximate": "none"}, None),
    ("self.m(x)", "self.m = nn.GELU(approximate='tanh')", "gelu", {"approximate": "tanh"}, None),
    ("torch.sigmoid(x)", "", "sigmoid", {}, None),
    ("F.sigmoid(x)", "", "sigmoid", {}, None),
    ("x.sigmoid()", "", "sigmoid", {}, None),
    ("self.m(x)", "self.m = nn.Sigmoid()", "sigmoid", {}, None),
    ("torch.tanh(x)", "", "tanh", {}, None),
    ("x.tanh()", "", "tanh", {}, None),
    ("self.m(x)", "self.m = nn.Tanh()", "tanh", {}, None),
    ("F.silu(x)", "", "silu", {}, None),
    ("self.m(x)", "self.m = nn.SiLU()", "silu", {}, None),
    ("F.mish(x)", "", "mish", {}, None),
    ("self.m(x)", "self.m = nn.Mish()", "mish", {}, None),
    ("F.elu(x)", "", "elu", {"alpha": 1.0}, None),
    ("F.elu(x, alpha=0.5)", "", "elu", {"alpha": 0.5}, None),
    ("self.m(x)", "self.m = nn.ELU(alpha=2.0)", "elu", {"alpha": 2.0}, None),
    ("torch.selu(x)", "", "selu", {}, None),
    ("F.selu(x)", "", "selu", {}, None),
    ("self.m(x)", "self.m = nn.SELU()", "selu", {}, None),
    ("F.softplus(x)", "", "softplus", {"beta": 1.0, "threshold": 20.0}, None),
    ("F.softplus(x, beta=2, threshold=10)", "", "softplus", {"beta": 2, "threshold": 10}, None),
    ("self.m(x)", "self.m = nn.Softplus()", "softplus", {"beta": 1.0, "threshold": 20.0}, None),
    # F.softsign is Python (x / (1 + |x|)): torch.export captures its element-wise ops
    ("F.softsign(x)", "", "div", {"rounding_mode": None}, [X, {"node": "add"}]),
    ("self.m(x)", "self.m = nn.Softsign()", "div", {"rounding_mode": None}, [X, {"node": "add"}]),
    ("F.hardsigmoid(x)", "", "hardsigmoid", {}, None),
    ("self.m(x)", "self.m = nn.Hardsigmoid()", "hardsigmoid", {}, None),
    ("F.hardswish(x)", "", "hardswish", {}, None),
    ("self.m(x)", "self.m = nn.Hardswish()", "hardswish", {}, None),
    ("F.hardtanh(x)", "", "hardtanh", {"min_val": -1.0, "max_val": 1.0}, None),
    ("F.hardtanh(x, -2.0, 2.0)", "", "hardtanh", {"min_val": -2.0, "max_val": 2.0}, None),
    ("self.m(x)", "self.m = nn.Hardtanh()", "hardtanh", {"min_val": -1.0, "max_val": 1.0}, None),
    ("F.relu6(x)", "", "hardtanh", {"min_val": 0.0, "max_val": 6.0}, None),
    ("self.m(x)", "self.m = nn.ReLU6()", "hardtanh", {"min_val": 0.0, "max_val": 6.0}, None),
    ("torch.clamp(x, min=-1.0, max=1.0)", "", "clamp", {"min": -1.0, "max": 1.0}, None),
    ("torch.clamp(x, -0.5)", "", "clamp", {"min": -0.5, "max": None}, None),
    ("x.clamp(max=3.0)", "", "clamp", {"min": None, "max": 3.0}, None),
    ("torch.clip(x, 0.0, 1.0)", "", "clamp", {"min": 0.0, "max": 1.0}, None),
    ("torch.clamp_min(x, 0.1)", "", "clamp", {"min": 0.1, "max": None}, None),
    ("x.clamp_max(0.2)", "", "clamp", {"min": None, "max": 0.2}, None),
    ("torch.clamp(x, min=y)", "", "maximum", {}, [X, Y]),
    ("torch.clamp(x, max=y)", "", "minimum", {}, [X, Y]),
    ("torch.clamp(x, y, y + 1.0)", "", "minimum", {}, [{"node": "maximum"}, {"node": "add"}]),
    ("x.clamp_min(y)", "", "maximum", {}, [X, Y]),
    ("torch.clamp_max(x, y)", "", "minimum", {}, [X, Y]),
    ("torch.abs(x)", "", "abs", {}, None),
    ("abs(x)", "", "abs", {}, None),
    ("x.abs()", "", "abs", {}, None),
    ("-x", "", "neg", {}, None),
    ("torch.neg(x)", "", "neg", {}, None),
    ("torch.exp(x)", "", "exp", {}, None),
    ("x.exp()", "", "exp", {}, None),
    ("torch.log(x)", "", "log", {}, None),
    ("torch.sqrt(x)", "", "sqrt", {}, None),
    ("x.sqrt()", "", "sqrt", {}, None),
    ("torch.rsqrt(x)", "", "rsqrt", {}, None),
    ("x ** 2", "", "pow", {}, [X, S(2)]),
    ("torch.pow(x, 3.0)", "", "pow", {}, [X, S(3.0)]),
    ("x.pow(0.5)", "", "pow", {}, [X, S(0.5)]),
    ("torch.square(x)", "", "pow", {}, [X, S(2)]),
    ("x + y", "", "add", {"alpha": 1}, [X, Y]),
    ("torch.add(x, y, alpha=2)", "", "add", {"alpha": 2}, [X, Y]),
    ("x.add(y)", "", "add", {"alpha": 1}, [X, Y]),
    ("x + 1.5", "", "add", {"alpha": 1}, [X, S(1.5)]),
    ("1.5 + x", "", "add", {"alpha": 1}, [X, S(1.5)]),
    ("x - y", "", "sub", {"alpha": 1}, [X, Y]),
    ("2.0 - x", "", "sub", {"alpha": 1}, [S(2.0), X]),
    ("torch.sub(x, 3)", "", "sub", {"alpha": 1}, [X, S(3)]),
    ("torch.rsub(x, 2.0)", "", "sub", {"alpha": 1}, [S(2.0), X]),
    ("x.sub(y, alpha=0.5)", "", "sub", {"alpha": 0.5}, [X, Y]),
    ("x * y", "", "mul", {}, [X, Y]),
    ("3 * x", "", "mul", {}, [X, S(3)]),
    ("torch.mul(x, 0.5)", "", "mul", {}, [X, S(0.5)]),
    ("x.mul(y)", "", "mul", {}, [X, Y]),
    ("x / y", "", "div", {"rounding_mode": None}, [X, Y]),
    ("1.0 / x", "", "mul", {}, [{"node": "reciprocal"}, S(1.0)]),  # ATen: reciprocal(x) * 1.0
    ("torch.div(x, 2.0)", "", "div", {"rounding_mode": None}, [X, S(2.0)]),
    ("x.div(y)", "", "div", {"rounding_mode": None}, [X, Y]),
    ("torch.true_divide(x, y)", "", "div", {"rounding_mode": None}, [X, Y]),
    ("torch.reciprocal(x)", "", "div", {"rounding_mode": None}, [S(1.0), X]),
    ("torch.minimum(x, y)", "", "minimum", {}, [X, Y]),
    ("torch.maximum(x, y)", "", "maximum", {}, [X, Y]),
    ("torch.max(x, y)", "", "maximum", {}, [X, Y]),
    ("torch.min(x, y)", "", "minimum", {}, [X, Y]),
    ("x.max(y)", "", "maximum", {}, [X, Y]),
    ("torch.where(x > 0, x, y)", "", "where", {}, [{"node": "gt"}, X, Y]),
    ("torch.where(x > 0, x, 0.0)", "", "where", {}, [{"node": "gt"}, X, S(0.0)]),
    ("x.where(x > 0, y)", "", "where", {}, [{"node": "gt"}, X, Y]),
    ("x > y", "", "gt", {}, [X, Y]),
    ("x < 0.5", "", "lt", {}, [X, S(0.5)]),
    ("x >= y", "", "ge", {}, [X, Y]),
    ("x <= y", "", "le", {}, [X, Y]),
    ("x == y", "", "eq", {}, [X, Y]),
    ("x != y", "", "ne", {}, [X, Y]),
    ("torch.gt(x, y)", "", "gt", {}, [X, Y]),
    ("x.lt(y)", "", "lt", {}, [X, Y]),
    ("torch.ge(x, 0)", "", "ge", {}, [X, S(0)]),
    ("torch.le(x, y)", "", "le", {}, [X, Y]),
    ("torch.eq(x, y)", "", "eq", {}, [X, Y]),
    ("x.ne(y)", "", "ne", {}, [X, Y]),
    ("torch.log1p(x)", "", "log1p", {}, None),
    ("torch.erf(x)", "", "erf", {}, None),
    ("x.sign()", "", "sign", {}, None),
    ("torch.round(x)", "", "round", {}, None),
    ("torch.remainder(x, y)", "", "remainder", {}, [X, Y]),
    ("x % 0.5", "", "remainder", {}, [X, S(0.5)]),
    ("torch.fmod(x, y)", "", "fmod", {}, [X, Y]),
    ("torch.atan2(x, y)", "", "atan2", {}, [X, Y]),
]


class ElementwiseSpellings(TempOps, unittest.TestCase):
    def test_every_spelling(self):
        for expr, init, op, attrs, args in ELEMENTWISE:
            with self.subTest(expr=expr, init=init):
                r = self.elementwise(expr, init=init)
                self.assertEqual(r.rc, 0, r.stderr)
                node = r.out_node()
                self.assertEqual(node["op"], op)
                self.assertEqual(node["attrs"], attrs)
                self.assertEqual(node["args"], args if args is not None else [X])
                self.assertEqual(node["shape"], [4, 8])
                self.assertTrue(node["line"] > 0 and node["file"] == r.op_path)
                self.assertIn("return", node["code"])

    def test_var_and_std_are_a_mean_and_a_sum(self):
        # (expression, output shape, divisor N - correction, the ops from the sum on)
        for expr, shape, divisor, last in [
                ("x.var(dim=-1, keepdim=True)", [4, 1], 7, ["div"]),
                ("torch.var(x, 1, correction=0)", [4], 8, ["div"]),
                ("x.std(dim=0)", [8], 3, ["div", "sqrt"]),
                ("torch.var_mean(x, dim=1)[0]", [4], 7, ["div"])]:
            with self.subTest(expr=expr):
                r = self.elementwise(expr)
                self.assertEqual(r.rc, 0, r.stderr)
                ops = [n["op"] for n in r.spec["nodes"]]
                self.assertIn("mean", ops)
                at = len(ops) - 1 - ops[::-1].index("sum")
                self.assertEqual(ops[at + 1:], last)
                self.assertLess(ops.index("mean"), ops.index("sub"))
                self.assertLess(ops.index("sub"), at)
                div = r.spec["nodes"][at + 1]
                self.assertEqual(div["args"][1], S(divisor))
                self.assertEqual(r.out_node()["shape"], shape)

    def test_gathers(self):
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.tok = nn.Embedding(50, 8, padding_idx=0)
            def forward(self, ids, x):
                return self.tok(ids) + torch.index_select(x, 0, ids[0])
        def get_inputs():
            return [torch.randint(0, 50, (2, 4)), torch.randn(50, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ops = {n["op"]: n for n in r.spec["nodes"]}
        self.assertEqual(ops["embedding"]["args"][0], {"node": "tok.weight"})
        self.assertEqual(ops["embedding"]["args"][1], {"node": "ids"})
        self.assertEqual(ops["embedding"]["shape"], [2, 4, 8])
        self.assertEqual(ops["index_select"]["attrs"], {"dim": 0})
        self.assertEqual(ops["index_select"]["args"][0], {"node": "x"})

    def test_indexing_by_one_integer_tensor_is_an_index_select(self):
        # x[idx] and x[:, idx] with a 2-D index: a gather along that dim, reshaped to torch's
        # result; a bool mask (data-dependent shape) is not.
        for expr, dim, shape in [("x[idx]", 0, [2, 3, 8]), ("x[:, idx]", 1, [10, 2, 3])]:
            with self.subTest(expr=expr):
                r = self.trace("""
                class Model(nn.Module):
                    def forward(self, x, idx):
                        return %s
                def get_inputs():
                    return [torch.randn(10, 8), torch.randint(0, 8, (2, 3))]
                """ % expr)
                self.assertEqual(r.rc, 0, r.stderr)
                ops = {n["op"]: n for n in r.spec["nodes"]}
                self.assertEqual(ops["index_select"]["attrs"], {"dim": dim})
                self.assertEqual(r.out_node()["shape"], shape)
                self.assertNotIn("aten.index.Tensor", json.dumps(r.spec))

    def test_roll_is_slices_and_a_cat(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                return torch.roll(x, shifts=(-3, 2), dims=(1, 2))
        def get_inputs():
            return [torch.randn(2, 7, 5)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ops = [n["op"] for n in r.spec["nodes"]]
        self.assertEqual(ops.count("cat"), 2, ops)
        self.assertEqual(ops.count("slice"), 4, ops)
        self.assertEqual(r.out_node()["shape"], [2, 7, 5])

    def test_cosine_similarity_is_norms_and_a_sum(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, q, k):
                return F.cosine_similarity(q.unsqueeze(1), k.unsqueeze(0), dim=-1, eps=1e-6)
        def get_inputs():
            return [torch.randn(4, 8), torch.randn(5, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ops = [n["op"] for n in r.spec["nodes"]]
        self.assertNotIn("cosine_similarity", ops)
        self.assertEqual(ops.count("vector_norm"), 2, ops)
        self.assertEqual(r.out_node()["op"], "sum")
        self.assertEqual(r.out_node()["shape"], [4, 5])

    def test_bitwise_ops_of_integers_and_masks_and_grid_sample(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x, i, m, g):
                k = (i & 7) ^ (i << 2) | (i >> 1)
                return (k.float() + ((m & (x > 0)) | m).float(),
                        F.grid_sample(x.view(1, 1, 8, 8), g, padding_mode="reflection"))
        def get_inputs():
            return [torch.randn(8, 8), torch.randint(0, 9, (8, 8)), torch.rand(8, 8) > 0.5,
                    torch.rand(1, 4, 4, 2)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ops = [n["op"] for n in r.spec["nodes"]]
        for op in ("bitwise_and", "bitwise_xor", "bitwise_or", "bitwise_left_shift",
                   "bitwise_right_shift", "logical_and", "logical_or"):
            self.assertIn(op, ops)
        self.assertFalse([op for op in ops if "grid" in op or op.startswith("aten.")], ops)
        self.assertEqual(r.out_node(1)["shape"], [1, 1, 4, 4])

    def test_einsum_and_baddbmm_are_bmm_with_views(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, q, k, c):
                s = torch.einsum("bhqd,bhkd->bhqk", q, k)
                return torch.baddbmm(c, s.reshape(8, 16, 16), c, beta=0.5)
        def get_inputs():
            return [torch.randn(2, 4, 16, 8), torch.randn(2, 4, 16, 8), torch.randn(8, 16, 16)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ops = [n["op"] for n in r.spec["nodes"]]
        self.assertNotIn("einsum", ops)
        self.assertNotIn("baddbmm", ops)
        self.assertEqual(ops.count("bmm"), 2, ops)

    def test_the_nots_of_a_mask_are_eq_zero(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                m = x > 0
                return (~m).float() + torch.logical_not(m).float()
        def get_inputs():
            return [torch.randn(4, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        eqs = [n for n in r.spec["nodes"] if n["op"] == "eq"]
        self.assertEqual(len(eqs), 2, [n["op"] for n in r.spec["nodes"]])
        for n in eqs:
            self.assertEqual(n["args"][1], {"scalar": 0})
        self.assertNotIn("bitwise_not", json.dumps(r.spec))

    def test_interpolate_is_an_upsample_with_its_scales(self):
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
            def forward(self, x):
                a = F.interpolate(x, size=(12, 10), mode="nearest")
                b = F.interpolate(x, scale_factor=1.5, mode="nearest-exact")
                return a, b, self.up(x)
        def get_inputs():
            return [torch.randn(2, 3, 8, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ups = [n for n in r.spec["nodes"] if n["op"].startswith("upsample")]
        self.assertEqual([n["op"] for n in ups],
                         ["upsample_nearest", "upsample_nearest", "upsample_linear"])
        self.assertEqual(ups[0]["shape"], [2, 3, 12, 10])
        self.assertFalse(ups[0]["attrs"]["exact"])
        self.assertIsNone(ups[0]["attrs"]["scales"])
        self.assertTrue(ups[1]["attrs"]["exact"])
        self.assertEqual(ups[1]["attrs"]["scales"], [1.5, 1.5])
        self.assertEqual(ups[1]["shape"], [2, 3, 12, 12])
        self.assertTrue(ups[2]["attrs"]["align_corners"])
        self.assertEqual(ups[2]["shape"], [2, 3, 16, 16])

    def test_reflect_replicate_and_circular_pads_and_gather_are_kept_whole(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x, idx):
                a = F.pad(x, (1, 2, 3, 0), mode="reflect")
                b = F.pad(x, (1, 2, 3, 0), mode="replicate")
                c = F.pad(x, (1, 2, 3, 0), mode="circular")
                return a + b + c, torch.gather(x, 3, idx)
        def get_inputs():
            return [torch.randn(2, 3, 8, 8), torch.randint(0, 8, (2, 3, 8, 4))]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ops = [n["op"] for n in r.spec["nodes"]]
        self.assertNotIn("arange", json.dumps(r.spec))
        pads = [n for n in r.spec["nodes"] if n["op"] == "pad"]
        self.assertEqual([p["attrs"]["mode"] for p in pads], ["reflect", "replicate", "circular"],
                         ops)
        self.assertEqual(pads[0]["attrs"]["pad"], [1, 2, 3, 0])
        self.assertEqual(pads[0]["shape"], [2, 3, 11, 11])
        gathers = [n for n in r.spec["nodes"] if n["op"] == "gather"]
        self.assertEqual(len(gathers), 1, ops)
        self.assertEqual(gathers[0]["attrs"]["dim"], 3)

    def test_arange_in_forward_is_a_node(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                t = x.size(1)
                return x + torch.arange(t, device=x.device) + torch.arange(1, 2 * t + 1, 2, device=x.device)
        def get_inputs():
            return [torch.randn(4, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ar = [n for n in r.spec["nodes"] if n["op"] == "arange"]
        self.assertEqual(len(ar), 2, [n["op"] for n in r.spec["nodes"]])
        self.assertEqual((ar[0]["attrs"]["start"], ar[0]["attrs"]["step"], ar[0]["shape"]), (0, 1, [8]))
        self.assertEqual((ar[1]["attrs"]["start"], ar[1]["attrs"]["step"], ar[1]["shape"]), (1, 2, [8]))
        self.assertEqual(ar[0]["dtype"], "int64")

    def test_cummax_values_and_logcumsumexp_are_scans(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                return torch.cummax(x, 1).values + torch.cummin(x, dim=1)[0] + torch.logcumsumexp(x, 1)
        def get_inputs():
            return [torch.randn(4, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ops = [n["op"] for n in r.spec["nodes"]]
        self.assertEqual([o for o in ops if o.startswith(("cum", "log"))],
                         ["cummax", "cummin", "logcumsumexp"], ops)
        self.assertNotIn("getitem", ops)

    def test_inplace_method_is_functionalized(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                y = x * 2.0
                y.relu_()
                y.add_(1.0)
                return y
        def get_inputs():
            return [torch.randn(4, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ops = [(n["name"], n["op"], n["args"]) for n in r.spec["nodes"]]
        self.assertEqual(ops[1][1], "relu")
        self.assertEqual(ops[2][1], "add")
        self.assertEqual(ops[2][2], [{"node": ops[1][0]}, S(1.0)])
        self.assertEqual(r.spec["outputs"][0]["node"], ops[2][0])

    def test_zeros_like_is_a_constant_and_its_operand_is_not_kept(self):
        # An exclusive scan's leading zeros: zeros_like reads only the shape of x[:, :1], so the
        # slice computing that operand is no node of the spec.
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                return torch.cat((torch.zeros_like(x[:, :1]), x.exp()), dim=1)
        def get_inputs():
            return [torch.randn(4, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ops = [(n["op"], n["args"], n["shape"]) for n in r.spec["nodes"]]
        self.assertEqual([o[0] for o in ops], ["full", "exp", "cat"])
        self.assertEqual(ops[0][1:], ([], [4, 1]))
        self.assertEqual(r.spec["nodes"][0]["attrs"]["fill_value"], 0)

    def test_unknown_op_keeps_qualified_target(self):
        r = self.elementwise("torch.lgamma(x)")
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(r.out_node()["op"], "aten.lgamma.default")
        self.assertEqual(r.out_node()["target"], "aten.lgamma.default")
        r = self.elementwise("x.erfinv()")
        self.assertEqual(r.out_node()["op"], "aten.erfinv.default")


class Anchors(TempOps, unittest.TestCase):
    def test_linear_module(self):
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.fc = nn.Linear(d, 16)
                self.proj = nn.Linear(16, 4, bias=False)
            def forward(self, x):
                return self.proj(self.fc(x))
        def get_inputs():
            return [torch.randn(2, 8)]
        def get_init_inputs():
            return [8]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        fc, proj = r.spec["nodes"]
        self.assertEqual(fc["op"], "linear")
        self.assertEqual(fc["args"], [X, {"node": "fc.weight"}, {"node": "fc.bias"}])
        self.assertEqual(proj["args"], [{"node": fc["name"]}, {"node": "proj.weight"},
                                        {"none": True}])
        self.assertEqual((fc["module"], proj["module"]), ("fc", "proj"))
        self.assertEqual(r.spec["init_inputs"], [8])
        self.assertEqual([p["name"] for p in r.spec["params"]],
                         ["fc.weight", "fc.bias", "proj.weight"])
        self.assertEqual(r.spec["params"][0]["shape"], [16, 8])
        self.assertEqual(r.spec["params"][0]["kind"], "parameter")

    def test_functional_linear_with_get_attr_params(self):
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.randn(4, 8))
                self.register_buffer("b", torch.zeros(4))
            def forward(self, x):
                return F.linear(x, self.w, self.b)
        def get_inputs():
            return [torch.randn(2, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        (node,) = r.spec["nodes"]
        self.assertEqual(node["op"], "linear")
        self.assertEqual(node["args"], [X, {"node": "w"}, {"node": "b"}])
        kinds = {p["name"]: p["kind"] for p in r.spec["params"]}
        self.assertEqual(kinds, {"w": "parameter", "b": "buffer"})

    def test_anchor_family(self):
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3, padding=1)
                self.bn = nn.BatchNorm2d(4)
                self.gn = nn.GroupNorm(2, 4)
                self.ln = nn.LayerNorm(8)
                self.pool = nn.MaxPool2d(2)
                self.ct = nn.ConvTranspose2d(4, 2, 2, stride=2)
            def forward(self, x, w):
                a = self.ln(self.gn(self.bn(self.conv(x))))
                b = torch.softmax(a, dim=-1)
                c = F.log_softmax(b, dim=1)
                d = c.sum(dim=1, keepdim=True)
                e = torch.mean(c, dim=[2, 3])
                f = torch.amax(c, dim=-1)
                g = torch.max(c, dim=1)[0]
                h = torch.argmax(c, dim=1)
                i = torch.cumsum(c, dim=2)
                j = torch.matmul(x, w)
                k = torch.bmm(x[0], w[0])
                l = F.avg_pool2d(self.pool(a), 2)
                m = self.ct(a)
                n = F.mse_loss(a, c)
                o = F.layer_norm(a, (8,), eps=1e-6)
                p = torch.prod(c, 1)
                return d, e, f, g, h, i, j, k, l, m, n, o, p
        def get_inputs():
            return [torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        by_op = {}
        for n in r.spec["nodes"]:
            by_op.setdefault(n["op"], n)
        conv = by_op["conv2d"]
        self.assertEqual(conv["args"], [X, {"node": "conv.weight"}, {"node": "conv.bias"}])
        self.assertEqual(conv["attrs"], {"stride": [1, 1], "padding": [1, 1],
                                         "dilation": [1, 1], "groups": 1})
        bn = by_op["batch_norm"]
        self.assertEqual(bn["args"][1:3], [{"node": "bn.running_mean"},
                                           {"node": "bn.running_var"}])
        self.assertEqual(bn["attrs"]["eps"], 1e-05)
        self.assertEqual(by_op["group_norm"]["attrs"], {"num_groups": 2, "eps": 1e-05})
        self.assertEqual(by_op["layer_norm"]["attrs"], {"normalized_shape": [8], "eps": 1e-05})
        self.assertEqual(by_op["softmax"]["attrs"], {"dim": -1, "dtype": None})
        self.assertEqual(by_op["log_softmax"]["attrs"]["dim"], 1)
        self.assertEqual(by_op["sum"]["attrs"], {"dim": [1], "keepdim": True, "dtype": None})
        self.assertEqual(by_op["mean"]["attrs"]["dim"], [2, 3])
        self.assertEqual(by_op["amax"]["attrs"], {"dim": [-1], "keepdim": False})
        self.assertEqual(by_op["max"]["attrs"], {"dim": 1, "keepdim": False})
        self.assertEqual(by_op["max"]["result"], "tuple")
        self.assertEqual(by_op["max"]["shape"], [2, 8, 8])
        self.assertEqual([t["dtype"] for t in by_op["max"]["tuple"]], ["float32", "int64"])
        self.assertEqual(by_op["argmax"]["dtype"], "int64")
        self.assertEqual(by_op["cumsum"]["attrs"], {"dim": 2, "dtype": None})
        self.assertIn("matmul", by_op)
        self.assertIn("bmm", by_op)
        self.assertEqual(by_op["max_pool2d"]["attrs"]["kernel_size"], [2, 2])
        self.assertEqual(by_op["max_pool2d"]["attrs"]["stride"], [2, 2])  # nn.MaxPool2d spells it
        self.assertEqual(by_op["avg_pool2d"]["attrs"]["kernel_size"], [2, 2])
        self.assertEqual(by_op["conv_transpose2d"]["attrs"]["stride"], [2, 2])
        self.assertEqual(by_op["mse_loss"]["attrs"], {"reduction": "mean"})
        self.assertEqual(by_op["prod"]["attrs"]["dim"], 1)
        self.assertEqual(len(r.spec["outputs"]), 13)
        lns = [n for n in r.spec["nodes"] if n["op"] == "layer_norm"]
        self.assertEqual(lns[1]["attrs"], {"normalized_shape": [8], "eps": 1e-6})
        self.assertEqual(lns[1]["args"][1:], [{"none": True}, {"none": True}])


if __name__ == "__main__":
    unittest.main()


class MoreAnchors(TempOps, unittest.TestCase):
    def test_sequential_and_reductions(self):
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.seq = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Dropout(0.0))
                self.norm = nn.RMSNorm(8)
            def forward(self, x):
                y = self.norm(self.seq(x))
                return torch.max(y), y.max(dim=1).values, torch.min(y, 1, keepdim=True)[1], \\
                    y.view(y.size(0), -1), F.conv1d(y.unsqueeze(1), torch.ones(2, 1, 3))
        def get_inputs():
            return [torch.randn(4, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        nodes = r.spec["nodes"]
        lin = nodes[0]
        self.assertEqual(lin["op"], "linear")
        self.assertEqual(lin["args"][1:], [{"node": "seq.0.weight"}, {"node": "seq.0.bias"}])
        self.assertEqual(lin["module"], "seq.0")
        self.assertEqual(nodes[1]["op"], "relu")
        self.assertEqual(nodes[2]["op"], "clone")  # dropout in eval mode: a copy
        rms = nodes[3]
        self.assertEqual(rms["op"], "rms_norm")
        self.assertEqual(rms["args"][1], {"node": "norm.weight"})
        self.assertEqual(rms["attrs"], {"normalized_shape": [8], "eps": None})
        maxes = [n for n in nodes if n["op"] == "max"]
        self.assertEqual(maxes[0]["attrs"], {"dim": None, "keepdim": False})
        self.assertEqual(maxes[0]["shape"], [])
        self.assertEqual(maxes[1]["attrs"], {"dim": 1, "keepdim": False})
        mins = [n for n in nodes if n["op"] == "min"]
        self.assertEqual(mins[0]["attrs"], {"dim": 1, "keepdim": True})
        # y.size(0) is a constant at the declared shapes: no size node
        view = next(n for n in nodes if n["op"] == "reshape")
        self.assertEqual(view["attrs"]["shape"], [4, -1])
        conv = next(n for n in nodes if n["op"] == "conv1d")
        ones = next(n for n in nodes if n["name"] == conv["args"][1]["node"])
        self.assertEqual((ones["op"], ones["attrs"]["size"], ones["attrs"]["fill_value"]),
                         ("full", [2, 1, 3], 1))
        self.assertEqual(conv["attrs"], {"stride": [1], "padding": [0], "dilation": [1],
                                         "groups": 1})


class NllLoss(TempOps, unittest.TestCase):
    def test_nll_of_a_log_softmax_is_cross_entropy_and_weighted_nll_stays(self):
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("w", torch.rand(10))
            def forward(self, x, t):
                ls = F.log_softmax(x, dim=1)
                return (F.nll_loss(F.log_softmax(x * 2, dim=-1), t, ignore_index=3),
                        F.nll_loss(ls, t, weight=self.w, reduction="sum"), ls)
        def get_inputs():
            return [torch.randn(16, 10), torch.randint(0, 10, (16,))]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ce = r.out_node(0)
        self.assertEqual((ce["op"], ce["attrs"]),
                         ("cross_entropy", {"reduction": "mean", "ignore_index": 3,
                                            "label_smoothing": 0.0}))
        self.assertEqual(r.node(ce["args"][0]["node"])["op"], "mul")  # x * 2, log_softmax gone
        self.assertEqual(ce["args"][1:], [{"node": "t"}, {"none": True}])
        nll = r.out_node(1)
        self.assertEqual((nll["op"], nll["args"][2]), ("nll_loss", {"node": "w"}))
        self.assertEqual(r.node(nll["args"][0]["node"])["op"], "log_softmax")  # also returned
        self.assertEqual([n["op"] for n in r.spec["nodes"]].count("log_softmax"), 1)


class TopkAndSort(TempOps, unittest.TestCase):
    def test_topk_sort_argsort_msort_are_sort_nodes_read_through_getitem(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                v, i = torch.topk(x, 3, dim=0, largest=False)
                return v, i, x.sort(descending=True)[0], torch.argsort(x, dim=1), torch.msort(x)
        def get_inputs():
            return [torch.randn(6, 5)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        topk = r.node(r.out_node(0)["args"][0]["node"])
        self.assertEqual((topk["op"], topk["attrs"]),
                         ("topk", {"k": 3, "dim": 0, "largest": False, "sorted": True}))
        self.assertEqual([r.out_node(k)["args"][1] for k in (0, 1)],
                         [{"scalar": 0}, {"scalar": 1}])
        sorts = [r.node(r.out_node(k)["args"][0]["node"]) for k in (2, 3, 4)]
        self.assertEqual([n["op"] for n in sorts], ["sort"] * 3)
        self.assertEqual([(n["attrs"]["dim"], n["attrs"]["descending"]) for n in sorts],
                         [(-1, True), (1, False), (0, False)])
        self.assertEqual(r.out_node(3)["args"][1], {"scalar": 1})  # argsort: the indices


class MoreSpellings(TempOps, unittest.TestCase):
    def test_math_masks_tiling_diagonals_and_order_statistics(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x, v):
                a = torch.hypot(x, x) + torch.logaddexp(x, x) + torch.xlogy(x, x)
                b = torch.nan_to_num(x, posinf=1.0) * torch.logical_and(x > 0, torch.isnan(x))
                c = F.rrelu(x, training=False) + torch.addmv(v, x, v)
                return (a + b + c, x.repeat(2, 1, 1), torch.diagonal(x, 1), torch.kthvalue(x, 2)[1],
                        torch.median(x), x.any(dim=1), torch.all(x))
        def get_inputs():
            return [torch.randn(6, 6), torch.randn(6)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ops = [n["op"] for n in r.spec["nodes"]]
        for op in ("hypot", "logaddexp", "xlogy", "nan_to_num", "logical_and", "isnan",
                   "leaky_relu", "repeat", "diagonal", "kthvalue", "median", "amax", "amin"):
            self.assertIn(op, ops)
        leaky = next(n for n in r.spec["nodes"] if n["op"] == "leaky_relu")
        self.assertAlmostEqual(leaky["attrs"]["negative_slope"], (1 / 8 + 1 / 3) / 2)
        self.assertEqual(next(n for n in r.spec["nodes"] if n["op"] == "nan_to_num")["attrs"],
                         {"nan": None, "posinf": 1.0, "neginf": None})
        self.assertEqual(r.out_node(1)["attrs"], {"repeats": [2, 1, 1]})
        self.assertEqual(r.out_node(2)["attrs"], {"offset": 1, "dim1": 0, "dim2": 1})
        kth = r.node(r.out_node(3)["args"][0]["node"])
        self.assertEqual(kth["attrs"], {"k": 2, "dim": -1, "keepdim": False})
        self.assertEqual(r.out_node(4)["attrs"], {"dim": None, "keepdim": False})
        self.assertEqual((r.out_node(5)["op"], r.out_node(5)["dtype"]), ("ne", "bool"))

    def test_a_permute_that_keeps_every_dim_is_no_node(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, a, b):
                return torch.tensordot(a, b, dims=([1, 2], [0, 1])), a.transpose(1, 1) * 2
        def get_inputs():
            return [torch.randn(4, 5, 6), torch.randn(5, 6, 3)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ops = [n["op"] for n in r.spec["nodes"]]
        self.assertNotIn("permute", ops)
        self.assertNotIn("transpose", ops)
        self.assertIn("matmul", ops)

    def test_indexing_by_several_tensors_is_index_and_by_one_index_select(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x, rows, cols):
                return x[rows, :, cols], x[:, cols]
        def get_inputs():
            return [torch.randn(4, 5, 6), torch.tensor([0, 3]), torch.tensor([1, -1])]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual((r.out_node(0)["op"], r.out_node(0)["args"][1]),
                         ("index", {"list": [{"node": "rows"}, {"none": True}, {"node": "cols"}]}))
        self.assertEqual(r.out_node(0)["shape"], [2, 5])
        self.assertIn("index_select", [n["op"] for n in r.spec["nodes"]])


class StableReferenceOrder(unittest.TestCase):
    def test_equal_values_keep_their_index_order_in_every_spelling(self):
        import torch

        from egg_frontend import refs
        x = torch.tensor([[1.0, 3.0, 1.0, 3.0, float("nan"), 2.0]])
        with refs.StableOrder():
            v, i = torch.topk(x, 3)
            w, j = x.topk(2, dim=1, largest=False)
            order = torch.argsort(x, descending=True)
            s = x.sort(dim=-1).indices
            positional = (torch.sort(x, 1, True).indices, x.argsort(1), torch.argsort(x, 1, True))
        self.assertTrue(torch.equal(positional[0], order))
        self.assertTrue(torch.equal(positional[1], s))
        self.assertTrue(torch.equal(positional[2], order))
        self.assertTrue(torch.equal(i, torch.tensor([[4, 1, 3]])))  # NaN counts as largest
        self.assertTrue(torch.equal(v[:, 1:], torch.tensor([[3.0, 3.0]])))
        self.assertTrue(torch.equal(j, torch.tensor([[0, 2]])))
        self.assertTrue(torch.equal(w, torch.tensor([[1.0, 1.0]])))
        self.assertTrue(torch.equal(order, torch.tensor([[4, 1, 3, 5, 0, 2]])))
        self.assertTrue(torch.equal(s, torch.tensor([[0, 2, 5, 1, 3, 4]])))


class VectorNorms(TempOps, unittest.TestCase):
    def test_norm_spellings(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                return (torch.norm(x, p=2, dim=1), x.norm(dim=1, keepdim=True),
                        torch.linalg.vector_norm(x, ord=float('inf'), dim=-1), torch.norm(x),
                        F.normalize(x, dim=-1))
        def get_inputs():
            return [torch.randn(4, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        nodes = r.spec["nodes"]
        # torch.norm and Tensor.norm are torch.linalg.vector_norm under torch.export
        norms = [n for n in nodes if n["op"] == "vector_norm"]
        self.assertEqual(norms[0]["attrs"], {"ord": 2, "dim": [1], "keepdim": False,
                                             "dtype": None})
        self.assertEqual(norms[1]["attrs"], {"ord": 2, "dim": [1], "keepdim": True,
                                             "dtype": None})
        self.assertEqual(norms[2]["attrs"]["ord"], 1.7976931348623157e+308)  # inf, for JSON
        self.assertEqual(norms[2]["attrs"]["dim"], [-1])
        self.assertEqual(norms[3]["attrs"], {"ord": 2, "dim": None, "keepdim": False,
                                             "dtype": None})
        # F.normalize is Python, kept whole while capturing (canonical.PYTHON_OPS)
        self.assertEqual([n for n in nodes if n["op"] == "normalize"][0]["attrs"],
                         {"p": 2.0, "dim": -1, "eps": 1e-12})
