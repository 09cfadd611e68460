"""tools/kernel_classes.py: the winner's and torch.compile's GPU time by kernel class."""
import contextlib
import importlib.util
import io
import json
import os
import sys
import tempfile
import unittest

_TOOLS = os.path.join(os.path.dirname(__file__), "..", "..", "tools")
sys.path.insert(0, _TOOLS)  # kernel_classes reads manifests through attempts.py
_spec = importlib.util.spec_from_file_location("kernel_classes",
                                               os.path.join(_TOOLS, "kernel_classes.py"))
kernel_classes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kernel_classes)


def manifest(kernel_ms, compile_ms, kernels, compiled):
    won = {"candidate": "w", "profile": {"harness": {"timing": {"kernels": kernels}}}}
    return {"candidate": "w", "stages": [{"attempts": [{"candidate": "other"}, won]}],
            "timing": {"kernel_ms": kernel_ms, "compile_device_ms": compile_ms,
                       "baseline_kernels": {"compile": compiled}}}


class KernelClassesTest(unittest.TestCase):
    def test_names_fall_in_classes(self):
        c = kernel_classes.kernel_class
        self.assertEqual(c("cudnn::engines_precompiled::nchwToNhwcKernel<float>"), "layout")
        self.assertEqual(c("egg_plan_s0::egg_k_s0_swap_narrow"), "layout")
        self.assertEqual(c("triton_poi_fused_convolution_0"), "layout")
        self.assertEqual(c("triton_poi_fused_convolution_mish_2"), "pass")
        self.assertEqual(c("sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc"), "library")
        self.assertEqual(c("egg_k_dnn_epilogue_nhwc"), "pass")

    def test_table_sorted_from_the_largest_loss(self):
        with tempfile.TemporaryDirectory() as tmp:
            for op, m in (("op_win", manifest(1.0, 1.5, [{"name": "sm90_xmma_fprop", "median_ms": 1.0}],
                                             [{"name": "sm90_xmma_fprop", "ms": 1.5}])),
                          ("op_lose", manifest(2.0, 1.0,
                                               [{"name": "egg_swap_last", "median_ms": 0.5},
                                                {"name": "sm90_xmma_fprop", "median_ms": 1.0},
                                                {"name": "egg_epilogue", "median_ms": 0.5}],
                                               [{"name": "sm90_xmma_fprop", "ms": 1.0}])),
                          ("op_none", {"candidate": "w", "stages": []})):
                os.makedirs(os.path.join(tmp, op))
                with open(os.path.join(tmp, op, "manifest.json"), "w") as f:
                    json.dump(m, f)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = kernel_classes.main([tmp])
        self.assertEqual(rc, 0)
        lines = out.getvalue().splitlines()
        self.assertEqual(len(lines), 4)  # header, rule, two ops (op_none recorded nothing)
        self.assertEqual(lines[2], "| op_lose | 2.000 | 1.000 | 0.50x | 1.000 / 1.000 | "
                                   "0.500 / 0.000 | 0.500 / 0.000 |")
        self.assertTrue(lines[3].startswith("| op_win | 1.000 | 1.500 | 1.50x |"))

    def test_nothing_recorded_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(kernel_classes.main([tmp]), 1)
        self.assertIn("no manifest with both", err.getvalue())


if __name__ == "__main__":
    unittest.main()
