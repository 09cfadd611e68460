"""--ref-device: where the references are computed, recorded in spec.json; the CPU stands in
where the model cannot run on the GPU (or there is none)."""
import contextlib
import io
import json
import os
import unittest

import torch

from egg_frontend.__main__ import main
from frontend_util import HEADER, TempOps

INPLACE = HEADER + """
class Model(nn.Module):
    def forward(self, x):
        x.mul_(2.0)
        return x + 1.0
def get_inputs():
    return [torch.randn(8, 16)]
"""

CPU_TENSOR_IN_FORWARD = HEADER + """
class Model(nn.Module):
    def forward(self, x):
        return x + torch.ones(16)
def get_inputs():
    return [torch.randn(8, 16)]
"""


class RefDeviceTest(TempOps, unittest.TestCase):
    def trace_on(self, source, device):
        path = self.write("op.py", source)
        out = os.path.join(self.tmp, "out-" + device)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = main(["trace", "--op", path, "--out", out, "--ref-device", device, "--seeds", "1"])
        self.assertEqual(rc, 0, err.getvalue())
        with open(os.path.join(out, "spec.json"), encoding="utf-8") as f:
            return json.load(f), out, err.getvalue()

    def test_device_recorded_and_inputs_saved_unchanged(self):
        for device in ("cpu", "cuda"):
            spec, out, _ = self.trace_on(INPLACE, device)
            want = "cuda" if device == "cuda" and torch.cuda.is_available() else "cpu"
            self.assertEqual(spec["reference"]["device"], want)
            saved = torch.load(os.path.join(out, "refs", "set0.pt"))
            torch.manual_seed(0)
            declared = torch.randn(8, 16)
            # The forward doubles its input in place: the saved inputs are the declared ones,
            # and the saved output is computed from them.
            self.assertTrue(torch.equal(saved["inputs"][0], declared))
            self.assertTrue(torch.allclose(saved["outputs"][0], declared * 2 + 1))
            self.assertEqual(saved["outputs"][0].device.type, "cpu")

    @unittest.skipUnless(torch.cuda.is_available(), "needs a GPU to fail on")
    def test_model_that_only_runs_on_the_cpu_falls_back(self):
        spec, _, err = self.trace_on(CPU_TENSOR_IN_FORWARD, "cuda")
        self.assertEqual(spec["reference"]["device"], "cpu")
        self.assertIn("computing references on the CPU", err)


if __name__ == "__main__":
    unittest.main()
