"""egg_bench.kernels.summarize: GEMM-library kernels told apart from the rest, per call."""
import unittest

from egg_bench.kernels import summarize


class SummarizeTest(unittest.TestCase):
    def test_splits_gemm_library_kernels_per_call(self):
        events = [("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32", 300.0),
                  ("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>", 100.0),
                  ("void at::native::vectorized_elementwise_kernel<4, GeluFunctor>", 50.0),
                  ("Memset (Device)", 10.0)] * 2
        s = summarize(events, 2)
        self.assertAlmostEqual(s["device_ms"], 0.46)
        self.assertAlmostEqual(s["gemm_library_ms"], 0.40)
        self.assertEqual(len(s["gemm_kernels"]), 2)
        self.assertTrue(all("elementwise" not in n for n in s["gemm_kernels"]))
        # Every kernel per call, in the order each first ran.
        self.assertEqual([k["name"][:12] for k in s["kernels"]],
                         ["sm90_xmma_ge", "void cutlass", "void at::nat", "Memset (Devi"])
        self.assertAlmostEqual(s["kernels"][0]["ms"], 0.30)

    def test_per_kernel_keeps_the_longest(self):
        from egg_bench.kernels import per_kernel

        events = [("k%d" % i, float(i)) for i in range(20)] + [("x" * 200, 100.0)]
        ks = per_kernel(events, 1, limit=3)
        self.assertEqual([k["name"][:3] for k in ks], ["k18", "k19", "xxx"])
        self.assertEqual(len(ks[2]["name"]), 160)

    def test_no_gemm(self):
        s = summarize([("void at::native::reduce_kernel<512, 1>", 20.0)], 1)
        self.assertEqual(s["gemm_library_ms"], 0.0)
        self.assertEqual(s["gemm_kernels"], [])


class DeviceTimeTest(unittest.TestCase):
    def test_a_failing_device_time_loses_only_its_own_figure(self):
        from unittest import mock

        from egg_bench import baseline

        result = {}
        with mock.patch.object(baseline, "bench", side_effect=RuntimeError("no _sleep")):
            baseline.device_time(lambda: None, result, "eager_device", min_trials=1, min_time_s=0)
        self.assertEqual(result, {"eager_device": {"error": "RuntimeError: no _sleep"}})

        with mock.patch.object(baseline, "bench", return_value={"median_ms": 0.5}) as b:
            baseline.device_time(lambda: None, result, "compile_device", min_trials=3, min_time_s=0)
        self.assertEqual(result["compile_device"], {"median_ms": 0.5})
        self.assertEqual(b.call_args.kwargs["lead_ms"], baseline.DEVICE_LEAD_MS)


class BuildModelTest(unittest.TestCase):
    def test_the_model_keeps_the_mode_the_reference_traces(self):
        import tempfile
        from pathlib import Path

        from egg_bench import baseline

        op = ("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
              "    def __init__(self, c):\n        super().__init__()\n        self.bn = nn.BatchNorm2d(c)\n\n"
              "    def forward(self, x):\n        return self.bn(x)\n\n\n"
              "def get_inputs():\n    return [torch.randn(2, 3, 4, 4)]\n\n\n"
              "def get_init_inputs():\n    return [3]\n")
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "bn_op.py"
            path.write_text(op)
            model = baseline.build_model(baseline.load_op(str(path)))
        # Training mode, as the frontend's trace (batch statistics), not eval's running statistics.
        self.assertTrue(model.training)
        self.assertTrue(model.bn.training)


class CompileModesTest(unittest.TestCase):
    """Both torch.compile modes are timed, each compiled under the shared (CPU work) lock and
    timed under the exclusive one."""

    def test_each_mode_is_compiled_then_timed_and_recorded(self):
        import contextlib
        from unittest import mock

        from egg_bench import baseline

        events = []

        def lock(name):
            @contextlib.contextmanager
            def held(waited=None):
                events.append(name + " on")
                yield
                events.append(name + " off")
            return held

        calls = []

        def fake_compile(model, **kw):
            calls.append(kw.get("mode", "default"))
            return lambda *a: events.append("call")

        result = {}
        with mock.patch.object(baseline.torch, "compile", side_effect=fake_compile), \
                mock.patch.object(baseline.torch.cuda, "synchronize"), \
                mock.patch.object(baseline.torch._dynamo, "reset"), \
                mock.patch.object(baseline, "cpu_work_lock", lock("shared")), \
                mock.patch.object(baseline, "gpu_timing_lock", lock("exclusive")), \
                mock.patch.object(baseline, "bench", side_effect=lambda *a, **k: {"median_ms": 0.5}):
            for key, mode in baseline.COMPILE_MODES:
                baseline.time_compiled(None, [], mode, result, key, {}, 1, 0)
        self.assertEqual(calls, ["default", "max-autotune-no-cudagraphs"])
        self.assertEqual(result["compile"]["mode"], "default")
        self.assertEqual(result["compile_max_autotune"]["mode"], "max-autotune-no-cudagraphs")
        self.assertEqual(result["compile_max_autotune_device"], {"median_ms": 0.5})
        # The first call (the compilation) runs under the shared lock, the trials under the
        # exclusive one.
        self.assertEqual(events[:5], ["shared on", "call", "shared off", "exclusive on", "exclusive off"])

    def test_a_failing_mode_is_recorded_with_its_mode(self):
        from unittest import mock

        from egg_bench import baseline

        result = {}
        with mock.patch.object(baseline.torch, "compile", side_effect=RuntimeError("inductor")), \
                mock.patch.object(baseline.torch._dynamo, "reset"):
            baseline.time_compiled(None, [], "max-autotune-no-cudagraphs", result,
                                   "compile_max_autotune", {}, 1, 0)
        self.assertEqual(result["compile_max_autotune"]["error"], "RuntimeError: inductor")
        self.assertEqual(result["compile_max_autotune"]["mode"], "max-autotune-no-cudagraphs")


if __name__ == "__main__":
    unittest.main()


class BaselineAdmissionTest(unittest.TestCase):
    """The baseline waits for GPU memory other EGG jobs hold, sized as the reference server's."""

    def test_sized_from_the_spec_plus_the_parameters(self):
        import json
        import os
        import tempfile
        from unittest import mock

        from egg_bench import baseline
        from egg_frontend import gpu_memory

        spec = {"inputs": [{"name": "x", "shape": [64, 32], "dtype": "float32"}],
                "outputs": [{"name": "y", "shape": [64, 16], "dtype": "float16"}],
                "nodes": [{"name": "t", "shape": [64, 128], "dtype": "float32"}]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "spec.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(spec, f)
            with mock.patch.object(gpu_memory, "admission") as admission:
                baseline.admitted(path, 1000, {})
        need = admission.call_args.args[1]
        self.assertEqual(need, 2 * 64 * 32 * 4 + 64 * 16 * 2 + 2 * 64 * 128 * 4 + 1000)
        self.assertEqual(need - 1000, gpu_memory.set_need_bytes(spec))

    def test_without_a_spec_nothing_is_awaited(self):
        import contextlib

        from egg_bench import baseline

        self.assertIsInstance(baseline.admitted(None, 1000, {}), contextlib.nullcontext)


class BaselineInputsTest(unittest.TestCase):
    """The baseline makes its inputs on the GPU under seed 0, as the reference server's set 0."""

    def test_made_with_the_gpu_as_default_device_else_on_the_cpu(self):
        import types
        from unittest import mock

        import torch
        from egg_bench import baseline

        def device_of_a_new_tensor():
            # On a machine without a GPU, making a tensor on the CUDA default device raises.
            try:
                return torch.empty(1).device.type
            except (RuntimeError, AssertionError) as e:
                return "cuda" if "cuda" in str(e).lower() or "nvidia" in str(e).lower() else str(e)

        calls = []

        def cpu_only():
            calls.append(device_of_a_new_tensor())
            if calls[-1] == "cuda":
                raise RuntimeError("this op makes its inputs on the CPU only")
            return [torch.rand(3)]

        with mock.patch.object(baseline, "to_cuda", side_effect=lambda t: t):
            out = baseline.make_inputs(types.SimpleNamespace(get_inputs=cpu_only))
        self.assertEqual(calls, ["cuda", "cpu"])
        torch.manual_seed(0)
        self.assertTrue(torch.equal(out[0], torch.rand(3)), "the CPU path is seeded too")
