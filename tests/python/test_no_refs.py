"""--no-refs: trace only (egg-gen passes it where no GPU will verify against reference tensors)."""
import contextlib
import io
import json
import os
import unittest

from egg_frontend.__main__ import main
from frontend_util import TempOps

OP = """
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) + 1.0
def get_inputs():
    return [torch.randn(8, 16)]
"""


class NoRefsTest(TempOps, unittest.TestCase):
    def test_spec_without_reference_files(self):
        path = self.write("op.py", OP)
        out = os.path.join(self.tmp, "out")
        with contextlib.redirect_stderr(io.StringIO()):
            rc = main(["trace", "--op", path, "--out", out, "--no-refs"])
        self.assertEqual(rc, 0)
        with open(os.path.join(out, "spec.json"), encoding="utf-8") as f:
            spec = json.load(f)
        self.assertEqual(spec["reference"], {"params": None, "sets": []})
        self.assertEqual(spec["outputs"][0]["shape"], [8, 16])
        self.assertFalse(os.path.exists(os.path.join(out, "refs")))

    def test_with_refs_by_default(self):
        run = self.trace(OP)
        self.assertEqual(run.rc, 0)
        self.assertTrue(os.path.exists(os.path.join(run.out, "refs", "set0.pt")))


if __name__ == "__main__":
    unittest.main()
