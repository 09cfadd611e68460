"""Dropout in training mode (egg_frontend/rng.py): the Philox stream, the keep rate, the capture as
numbered egg::dropout nodes reading egg_rng, and references drawing what the kernel draws."""

import unittest

import torch
import torch.nn.functional as F

from egg_frontend import rng
from frontend_util import TempOps


class Philox(unittest.TestCase):
    def test_known_answers(self):
        # Random123's kat_vectors for philox4x32 with 10 rounds (the same words as ATen's
        # at::philox_engine).
        cases = [((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
                 ((0xffffffff,) * 4, (0xffffffff,) * 2,
                  (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
                 ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
                  (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]
        for ctr, key, words in cases:
            self.assertEqual(tuple(rng.philox4x32_10(ctr, key)), words)
            tensors = tuple(torch.tensor([c], dtype=torch.int64) for c in ctr)
            self.assertEqual(tuple(int(w) for w in rng.philox4x32_10(tensors, key)), words)

    def test_keep_rate_is_one_minus_p_and_masks_differ_by_seed_offset_and_stream(self):
        n = 1 << 18
        base = rng.keep_mask(n, 0.3, 7, 0, 0, "cpu")
        rate = base.float().mean().item()
        self.assertLess(abs(rate - 0.7), 4 * (0.7 * 0.3 / n) ** 0.5)
        for other in (rng.keep_mask(n, 0.3, 8, 0, 0, "cpu"), rng.keep_mask(n, 0.3, 7, 1, 0, "cpu"),
                      rng.keep_mask(n, 0.3, 7, 0, 1, "cpu")):
            agree = (other == base).float().mean().item()
            self.assertLess(abs(agree - (0.7 ** 2 + 0.3 ** 2)), 0.01)  # independent draws
        self.assertTrue(torch.equal(base, rng.keep_mask(n, 0.3, 7, 0, 0, "cpu")))
        # Chunks of the draw are the same draws.
        self.assertTrue(torch.equal(rng.keep_mask(5 << 20, 0.5, 3, 2, 1, "cpu")[-n:],
                                    rng.keep_mask(5 << 20, 0.5, 3, 2, 1, "cpu")[-n:]))
        self.assertFalse(rng.keep_mask(1000, 1.0, 1, 0, 0, "cpu").any())
        self.assertTrue(rng.keep_mask(1000, 0.0, 1, 0, 0, "cpu").all())

    def test_dropout_keeps_scaled_values_and_zeroes_the_rest(self):
        x = torch.randn(64, 33)
        y = rng.philox_dropout(x, 0.25, 11, 3, 2)
        keep = rng.keep_mask(x.numel(), 0.25, 11, 3, 2, "cpu").view(x.shape)
        self.assertTrue(torch.equal(y[keep], x[keep] * torch.tensor(1 / 0.75)))
        self.assertTrue(torch.equal(y[~keep], torch.zeros_like(y[~keep])))
        self.assertEqual(rng.keep_threshold(0.25), 12582912)

    def test_drawing_numbers_calls_in_order_and_leaves_eval_mode_alone(self):
        x = torch.randn(16, 16)
        with rng.drawing(torch.tensor([5, 9])):
            a = F.dropout(x, 0.5, training=True)
            b = F.dropout(x, 0.5, training=True)
            c = F.dropout(x, 0.5, training=False)
        self.assertTrue(torch.equal(a, rng.philox_dropout(x, 0.5, 5, 9, 0)))
        self.assertTrue(torch.equal(b, rng.philox_dropout(x, 0.5, 5, 9, 1)))
        self.assertTrue(torch.equal(c, x))
        self.assertIs(F.dropout, rng._ORIGINAL)
        self.assertFalse(torch.equal(rng.state(0, "cpu"), rng.state(1, "cpu")))

    def test_attention_with_dropout_draws_its_weights_dropout_from_the_stream(self):
        torch.manual_seed(0)
        q, k, v = (torch.randn(2, 3, 12, 8) for _ in range(3))
        mask = torch.rand(12, 12) > 0.3
        with rng.drawing(torch.tensor([4, 1])):
            first = F.dropout(q, 0.5, training=True)
            causal = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25, is_causal=True)
            masked = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.1,
                                                    scale=0.5)
            plain = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        self.assertIs(F.scaled_dot_product_attention, rng._ORIGINAL_SDPA)
        self.assertTrue(torch.equal(first, rng.philox_dropout(q, 0.5, 4, 1, 0)))
        scores = (q @ k.transpose(-2, -1) / 8 ** 0.5).masked_fill(
            ~torch.ones(12, 12, dtype=torch.bool).tril(), float("-inf"))
        expected = rng.philox_dropout(scores.softmax(-1), 0.25, 4, 1, 1) @ v
        self.assertTrue(torch.allclose(causal, expected, atol=1e-6), (causal - expected).abs().max())
        weights = (q @ k.transpose(-2, -1) * 0.5).masked_fill(~mask, float("-inf")).softmax(-1)
        expected = rng.philox_dropout(weights, 0.1, 4, 1, 2) @ v
        self.assertTrue(torch.allclose(masked, expected, atol=1e-6))
        # Without dropout it is PyTorch's own attention.
        self.assertTrue(torch.equal(plain, F.scaled_dot_product_attention(q, k, v, is_causal=True)))


class Capture(TempOps, unittest.TestCase):
    def test_dropout_nodes_read_egg_rng_and_are_numbered_by_call(self):
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.drop = nn.Dropout(0.25)
            def forward(self, x):
                unused = F.dropout(x, 0.5)
                y = self.drop(torch.relu(x))
                return F.dropout(y, 0.1, training=True) + F.dropout(x, 0.5, training=False)
        def get_inputs():
            return [torch.randn(8, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(r.spec["inputs"][-1],
                         {"name": "egg_rng", "shape": [2], "dtype": "int64", "kind": "rng"})
        drops = [n for n in r.spec["nodes"] if n["op"] == "dropout"]
        # The unused first call still takes stream 0, as it does when the reference runs.
        self.assertEqual([(n["attrs"]["p"], n["attrs"]["stream"]) for n in drops],
                         [(0.25, 1), (0.1, 2)])
        for n in drops:
            self.assertEqual(n["args"][1], {"node": "egg_rng"})
            self.assertEqual(n["line"], 10 if n["attrs"]["stream"] == 1 else 11, n)
        # nn.MultiheadAttention in training mode: the attention weights' dropout is a stream.
        r = self.trace("""
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.attn = nn.MultiheadAttention(16, 2, dropout=0.2, batch_first=True)
            def forward(self, x):
                return self.attn(x, x, x, need_weights=False)[0]
        def get_inputs():
            return [torch.randn(2, 8, 16)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual([(n["attrs"]["p"], n["attrs"]["stream"]) for n in r.spec["nodes"]
                          if n["op"] == "dropout"], [(0.2, 0)])
        self.assertNotIn("scaled_dot_product_attention", [n["op"] for n in r.spec["nodes"]])
        self.assertNotIn("egg_rng", [i["name"] for i in self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                return F.dropout(x, 0.5, training=False)
        def get_inputs():
            return [torch.randn(8, 8)]
        """).spec["inputs"]])


if __name__ == "__main__":
    unittest.main()
