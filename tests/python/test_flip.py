"""torch.flip in every spelling becomes the canonical `flip` with its dims as a list."""

import unittest

from frontend_util import TempOps


class FlipSpellings(TempOps, unittest.TestCase):
    def test_every_spelling(self):
        r = self.trace("""
        class Model(nn.Module):
            def forward(self, x):
                a = torch.flip(x, [1])
                b = x.flip(-1)
                c = x.flip([0, 1])
                d = torch.flip(x, dims=(0,))
                e = x.flip(0, 1)
                return torch.cumsum(a, 1).flip(1), b, c, d, e
        def get_inputs():
            return [torch.randn(4, 8)]
        """)
        self.assertEqual(r.rc, 0, r.stderr)
        flips = [n for n in r.spec["nodes"] if n["op"] == "flip"]
        self.assertEqual([f["attrs"] for f in flips],
                         [{"dims": [1]}, {"dims": [-1]}, {"dims": [0, 1]}, {"dims": [0]},
                          {"dims": [0, 1]}, {"dims": [1]}])
        self.assertEqual(flips[0]["args"], [{"node": "x"}])
        self.assertEqual(flips[0]["shape"], [4, 8])
        self.assertEqual(r.node("cumsum")["args"], [{"node": flips[0]["name"]}])


if __name__ == "__main__":
    unittest.main()
