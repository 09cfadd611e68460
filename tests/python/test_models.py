"""Real-model blocks (examples/models) and the glue ops of ordinary model code trace into valid
schema-2 specs: shapes as Python ints, buffers sliced by traced sizes, views, masks, casts."""

import os
import unittest

from frontend_util import TempOps

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                      "models")


def ops(spec):
    return [n["op"] for n in spec["nodes"]]


class Models(TempOps, unittest.TestCase):
    def model(self, name):
        r = self.trace(path=os.path.realpath(os.path.join(MODELS, name, "op.py")))
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(r.spec["schema"], 2)
        for n in r.spec["nodes"]:  # every node names a line of the model's op.py
            self.assertEqual(n["file"], r.op_path, n)
            self.assertGreater(n["line"], 0, n)
        return r

    def test_every_model_has_a_test(self):
        for name in os.listdir(MODELS):
            self.assertTrue(hasattr(self, "test_" + name), name)

    def test_causal_attention(self):
        r = self.model("causal_attention")
        self.assertEqual(ops(r.spec).count("linear"), 2)
        self.assertIn("softmax", ops(r.spec))
        # the causal mask stays a buffer, sliced to the traced sequence length
        self.assertIn({"name": "bias", "shape": [1, 1, 128, 128], "dtype": "float32",
                       "kind": "buffer"}, r.spec["params"])
        first = next(n for n in r.spec["nodes"] if n["op"] == "slice")
        self.assertEqual(first["args"], [{"node": "bias"}])
        self.assertEqual(first["attrs"], {"dim": 2, "start": 0, "end": 64, "step": 1})
        fill = next(n for n in r.spec["nodes"] if n["op"] == "where")  # masked_fill
        self.assertEqual(fill["args"][1], {"scalar": -1.7976931348623157e+308})  # -inf
        view = next(n for n in r.spec["nodes"] if n["op"] == "reshape")
        self.assertEqual(view["attrs"]["shape"], [4, 64, 4, 32])  # B, T, n_head, C // n_head

    def test_transformer_block(self):
        r = self.model("transformer_block")
        sdpa = next(n for n in r.spec["nodes"] if n["op"] == "scaled_dot_product_attention")
        self.assertEqual((sdpa["attrs"]["is_causal"], sdpa["attrs"]["dropout_p"]), (True, 0.0))
        self.assertEqual(sdpa["shape"], [2, 8, 128, 32])
        self.assertEqual(ops(r.spec).count("layer_norm"), 2)
        gelu = next(n for n in r.spec["nodes"] if n["op"] == "gelu")
        self.assertEqual(gelu["attrs"], {"approximate": "tanh"})

    def test_mlp(self):
        r = self.model("mlp")
        self.assertEqual(ops(r.spec), ["rms_norm", "linear", "silu", "linear", "mul", "linear",
                                       "add"])
        self.assertEqual(r.spec["nodes"][0]["args"][1], {"node": "norm.weight"})

    def test_resnet_block(self):
        r = self.model("resnet_block")
        self.assertEqual(ops(r.spec).count("conv2d"), 3)
        bn = [n for n in r.spec["nodes"] if n["op"] == "batch_norm"]
        self.assertEqual(len(bn), 3)
        self.assertEqual(bn[0]["attrs"]["training"], False)
        self.assertEqual(bn[0]["args"][1:3], [{"node": "bn1.running_mean"},
                                              {"node": "bn1.running_var"}])
        self.assertEqual(r.spec["outputs"][0]["shape"], [8, 128, 28, 28])

    def test_vision_attention(self):
        r = self.model("vision_attention")
        for op in ("cat", "expand", "select", "max", "getitem", "softmax", "matmul"):
            self.assertIn(op, ops(r.spec))
        mx = next(n for n in r.spec["nodes"] if n["op"] == "max")
        self.assertEqual((mx["result"], [t["dtype"] for t in mx["tuple"]]),
                         ("tuple", ["float32", "int64"]))
        self.assertEqual([o["shape"] for o in r.spec["outputs"]], [[4, 192], [4, 192]])


class GlueOps(TempOps, unittest.TestCase):
    def forward(self, body, inputs="[torch.randn(4, 8)]", init=""):
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                %s
            def forward(self, x):
        %s
        def get_inputs():
            return %s
        """ % (init or "pass", "\n".join("            " + line for line in body.splitlines()),
               inputs))
        self.assertEqual(r.rc, 0, r.stderr)
        return r

    def test_views_and_layout(self):
        r = self.forward("""
    a = x.unsqueeze(0).squeeze(0)
    b = x.view(2, 16).reshape(4, 8).permute(1, 0).transpose(0, 1)
    c = x[:, None].expand(4, 3, 8)
    return a, b, c, x[1:3, ::2], x[:, 1], torch.cat([x, x], dim=1)""")
        by = {n["op"]: n for n in r.spec["nodes"]}
        attrs = {}
        for n in r.spec["nodes"]:
            attrs.setdefault(n["op"], []).append(n["attrs"])
        self.assertEqual(attrs["unsqueeze"], [{"dim": 0}, {"dim": 1}])  # x[:, None] too
        self.assertEqual(attrs["squeeze"], [{"dim": 0}])
        self.assertEqual(by["permute"]["attrs"], {"dims": [1, 0]})
        self.assertEqual(by["expand"]["attrs"], {"size": [4, 3, 8]})
        slices = [n["attrs"] for n in r.spec["nodes"] if n["op"] == "slice"]
        self.assertIn({"dim": 1, "start": 0, "end": None, "step": 2}, slices)
        self.assertEqual(by["select"]["attrs"], {"dim": 1, "index": 1})
        self.assertEqual(by["cat"]["attrs"], {"dim": 1})
        self.assertEqual([o["shape"] for o in r.spec["outputs"]],
                         [[4, 8], [4, 8], [4, 3, 8], [2, 4], [4], [4, 16]])

    def test_masks_and_selection(self):
        r = self.forward("""
    m = torch.triu(torch.ones(8, 8, dtype=torch.bool), diagonal=1)
    y = x.masked_fill(m[:4], float('-inf'))
    return torch.tril(y, -1), torch.where(x > 0, x, 0.0), torch.max(x, dim=1).values""")
        by = {n["op"]: n for n in r.spec["nodes"]}
        self.assertEqual(by["triu"]["attrs"], {"diagonal": 1})
        self.assertEqual(by["tril"]["attrs"], {"diagonal": -1})
        self.assertEqual(by["full"]["attrs"], {"size": [8, 8], "fill_value": 1, "dtype": "bool"})
        wheres = [n for n in r.spec["nodes"] if n["op"] == "where"]
        self.assertEqual(wheres[1]["args"][2], {"scalar": 0.0})
        self.assertEqual(by["max"]["attrs"], {"dim": 1, "keepdim": False})
        self.assertEqual(r.spec["outputs"][2]["node"], by["getitem"]["name"])

    def test_int64_bool_float64_tensors(self):
        r = self.forward("""
    i = x.long() + 1
    return i, x > 0, x.double() * 2""")
        self.assertEqual([o["dtype"] for o in r.spec["outputs"]], ["int64", "bool", "float64"])
        casts = [n for n in r.spec["nodes"] if n["op"] == "cast"]
        self.assertEqual([c["attrs"]["dtype"] for c in casts], ["int64", "float64"])
        r = self.forward("return x * 2", inputs="[torch.randint(0, 9, (4, 8))]")
        self.assertEqual(r.spec["inputs"][0]["dtype"], "int64")

    def test_size_unpacking_and_buffer_slicing(self):
        r = self.forward("""
    B, C = x.size()
    T = x.shape[-1]
    return x.view(B, 2, C // 2) * self.scale[:, :T].view(1, 2, -1)""",
                         init='self.register_buffer("scale", torch.ones(1, 16))')
        view = next(n for n in r.spec["nodes"] if n["op"] == "reshape")
        self.assertEqual(view["attrs"]["shape"], [4, 2, 4])
        self.assertIn("scale", [p["name"] for p in r.spec["params"]])

    def test_tensor_constant_made_in_forward_is_refused(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                return x * torch.tensor([1.0, 2.0])
        def get_inputs():
            return [torch.randn(4, 2)]
        """)
        self.assertEqual(r.rc, 1)
        self.assertEqual((r.error["op"], r.error["line"]), ("constant", 6))
        self.assertIn("register_buffer", r.error["hint"])

    def test_zero_dim_tensor_constant_made_in_forward_is_a_scalar(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                return torch.min(x, torch.tensor(0.5, device=x.device)) * 2.0
        def get_inputs():
            return [torch.randn(4, 2)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual([(n["op"], n["args"][1]) for n in r.spec["nodes"]],
                         [("minimum", {"scalar": 0.5}), ("mul", {"scalar": 2.0})])
        self.assertEqual(r.spec["params"], [])

    def test_recurrent_layer_without_dropout_is_one_node(self):
        # Training mode, dropout 0: nothing random. Kept whole rather than unrolled per time step.
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.gru = nn.GRU(8, 16, num_layers=2, batch_first=True)
            def forward(self, x):
                return self.gru(x)[0]
        def get_inputs():
            return [torch.randn(4, 64, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        ops = [n["op"] for n in r.spec["nodes"]]  # the zero h0 (full), the layer, its output
        self.assertEqual(ops.count("aten.gru.input"), 1)
        self.assertLessEqual(len(ops), 3, ops)
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.gru = nn.GRU(8, 16, num_layers=2, dropout=0.5)
            def forward(self, x):
                return self.gru(x)[0]
        def get_inputs():
            return [torch.randn(64, 4, 8)]
        """)
        self.assertEqual(r.rc, 1)
        self.assertIn("random", r.error["message"])

    def test_plain_tensor_attribute_is_a_buffer(self):
        r = self.forward("return x * self.w", init="self.w = torch.ones(8)")
        self.assertIn({"name": "w", "shape": [8], "dtype": "float32", "kind": "buffer"},
                      r.spec["params"])


if __name__ == "__main__":
    unittest.main()
