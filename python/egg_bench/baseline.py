"""`egg_bench baseline`: PyTorch eager and torch.compile (the default mode and
"max-autotune-no-cudagraphs") of an op.py's Model on its declared inputs (torch.manual_seed(0), as
the frontend's set 0, made on the GPU), timed in this process under torch.inference_mode() with
bench(). Every timed span holds the quiet locks exclusively (gpu_lock.py: no other timed span and
no EGG job's CPU work meanwhile); torch.compile's default-mode compilation holds the CPU lock
shared, as other CPU-heavy work does, and max-autotune's compilation, which times kernels on the
GPU, both exclusively."""
import contextlib
import importlib.util
import json
import os
import sys
import time
import traceback

import torch

from .gpu_lock import cpu_work_lock, gpu_timing_lock, gpu_work_lock
from .kernels import kernel_times, summarize
from .timing import bench


# The GPU's head start per device-time trial: longer than any suite model's host work per call.
DEVICE_LEAD_MS = 2.0

# torch.compile's modes, each timed: (the result's key, the mode). CUDA graphs stay off in both, as
# EGG's launch() runs without them.
COMPILE_MODES = (("compile", "default"), ("compile_max_autotune", "max-autotune-no-cudagraphs"))


def device_time(fn, result, key, **kw):
    """result[key] = device-time bench of fn; a failure (e.g. no torch.cuda._sleep) is recorded
    there and loses only this figure, never the event-timed baselines."""
    try:
        result[key] = bench(fn, lead_ms=DEVICE_LEAD_MS, **kw)
    except Exception as e:
        result[key] = {"error": f"{type(e).__name__}: {e}"}


def load_op(path):
    """Imports a KernelBench-style op.py (Model, get_inputs, get_init_inputs)."""
    spec = importlib.util.spec_from_file_location("egg_bench_op", path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # the op's local imports
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.pop(0)
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(mod, name):
            raise SystemExit(f"egg: error: {path} defines no {name}")
    return mod


def to_cuda(x):
    return x.cuda() if isinstance(x, torch.Tensor) else x


def make_inputs(mod):
    """get_inputs() under torch.manual_seed(0) with the GPU as the default device, as the reference
    server makes its set 0 (python/egg_frontend/loader.py): the same values, no host copy of
    inputs that can be gigabytes, and no minutes of CPU random numbers. A get_inputs() that does
    not run that way is called on the CPU and its tensors moved."""
    torch.manual_seed(0)
    try:
        with torch.device("cuda"):
            inputs = mod.get_inputs()
    except Exception:  # noqa: B902 - the op's own code; the CPU path reports its real failure
        torch.manual_seed(0)
        inputs = mod.get_inputs()
    return [to_cuda(t) for t in inputs]


def build_model(mod):
    """Model(*get_init_inputs()) in the mode it is built in, as EGG's frontend traces it
    (python/egg_frontend/loader.py): a BatchNorm built in training mode normalizes with batch
    statistics in the reference, so the baselines must too (.eval() would time the cheaper
    running-statistics batch norm against EGG's batch-statistics kernel)."""
    torch.manual_seed(0)
    return mod.Model(*mod.get_init_inputs())


def time_compiled(model, inputs, mode, result, key, waited, min_trials, min_time_s):
    """result[key] (and key + "_device") = torch.compile(model, mode=mode) timed; its compilation
    (the first call) is outside the timed span. A failing torch.compile is a fact to
    record, not a crash. Returns the compiled model (None where it failed)."""
    try:
        torch._dynamo.reset()  # each mode compiles afresh
        compiled = torch.compile(model) if mode == "default" else torch.compile(model, mode=mode)
        t0 = time.perf_counter()
        # The default mode's compilation is CPU work; max-autotune's times candidate kernels on the
        # GPU, so it is a timed span itself (other jobs' work would skew its choices).
        with cpu_work_lock(waited) if mode == "default" else gpu_timing_lock(waited):
            compiled(*inputs)
            torch.cuda.synchronize()
        compile_s = time.perf_counter() - t0
        with gpu_timing_lock(waited):
            result[key] = bench(lambda: compiled(*inputs), min_trials=min_trials,
                                min_time_s=min_time_s)
            device_time(lambda: compiled(*inputs), result, key + "_device",
                        min_trials=min_trials, min_time_s=min_time_s)
        result[key]["compile_s"] = compile_s
        result[key]["mode"] = mode
        return compiled
    except Exception as e:
        result[key] = {"error": f"{type(e).__name__}: {e}", "mode": mode,
                       "traceback": traceback.format_exc(limit=5)}
        return None


def admitted(spec_path, params_bytes, waited):
    """The GPU memory admission for the model's first call (egg_frontend/gpu_memory.py), sized
    from the traced spec as the reference server's; without a spec (run by hand), none."""
    if not spec_path:
        return contextlib.nullcontext()
    from egg_frontend import gpu_memory
    with open(spec_path, encoding="utf-8") as f:
        need = gpu_memory.set_need_bytes(json.load(f)) + params_bytes
    return gpu_memory.admission(torch, need, waited)


def run_baseline(op_path, compile_=True, min_trials=100, min_time_s=0.5, max_autotune=True,
                 spec_path=None):
    if not torch.cuda.is_available():
        raise SystemExit("egg: error: no CUDA device: the baselines are timed on the GPU")
    waited = {}
    with cpu_work_lock(waited):  # building the model on the host
        mod = load_op(op_path)
        model = build_model(mod)
    params_bytes = sum(t.numel() * t.element_size()
                       for t in list(model.parameters()) + list(model.buffers()))
    # Placed, its inputs made on the GPU, and run once under the admission: other EGG jobs' GPU
    # memory is waited for, and what this call allocates stays reserved by PyTorch's allocator for
    # the timed calls after it. The GPU lock is held shared, as for any untimed GPU work, after the
    # admission (its order).
    # Placed outside inference mode, as before (inference-mode parameters would be inference
    # tensors, which torch.compile's tracing treats differently).
    with admitted(spec_path, params_bytes, waited), gpu_work_lock(waited):
        model = model.cuda()
        inputs = make_inputs(mod)
        with torch.inference_mode():
            model(*inputs)  # first call (cuBLAS/cuDNN handles) outside the timed span
            torch.cuda.synchronize()
    result = {
        "schema": 1,
        "op": os.path.abspath(op_path),
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "precision": {"matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
                      "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32},
        "method": "in-process under torch.inference_mode(); CUDA events around each call; L2 "
                  "flushed (2x L2) before each trial; device-wide synchronize after; >= 3 warm-ups; "
                  ">= min_trials trials and >= min_time_s; each timed span holds the GPU and CPU locks "
                  "exclusively (no other timed span, no EGG CPU work). compile: torch.compile's "
                  "default mode; compile_max_autotune: mode max-autotune-no-cudagraphs. "
                  "*_device: the same after a %.1f ms GPU sleep per trial, so host overhead is "
                  "hidden and only GPU time is timed" % DEVICE_LEAD_MS,
    }
    with torch.inference_mode():
        with gpu_timing_lock(waited):
            result["eager"] = bench(lambda: model(*inputs), min_trials=min_trials, min_time_s=min_time_s)
            device_time(lambda: model(*inputs), result, "eager_device", min_trials=min_trials,
                        min_time_s=min_time_s)
        compiled = None  # the last mode timed
        for key, mode in COMPILE_MODES if compile_ else ():
            if mode != "default" and not max_autotune:
                result[key] = {"skipped": "--no-max-autotune", "mode": mode}
                continue
            compiled = (time_compiled(model, inputs, mode, result, key, waited, min_trials,
                                      min_time_s), key)
        # Last, so CUPTI is never on while anything above is timed: the kernels eager runs, and
        # the GEMM/conv library's share of them (the "% of cuBLAS" figure); then those of the
        # last torch.compile mode timed (each mode's compilation resets the one before).
        profiled = [("eager_kernels", model)]
        if compiled and compiled[0] is not None:
            profiled.append((compiled[1] + "_kernels", compiled[0]))
        for key, fn in profiled:
            try:
                with gpu_timing_lock(waited):
                    result[key] = summarize(kernel_times(lambda: fn(*inputs)), 20)
            except Exception as e:  # the profiler is a measurement aid, not a requirement
                result[key] = {"error": f"{type(e).__name__}: {e}"}
    result["gpu_lock_wait_s"] = waited.get("lock_wait_s", 0.0)
    result["gpu_memory_wait_s"] = waited.get("wait_s", 0.0)
    return result


def main(args):
    result = run_baseline(args.op, compile_=not args.no_compile, min_trials=args.min_trials,
                          min_time_s=args.min_time, max_autotune=not args.no_max_autotune,
                          spec_path=args.spec)
    tmp = args.out + f".tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
    os.replace(tmp, args.out)
    eager = result["eager"]["median_ms"]
    comp = result.get("compile", {}).get("median_ms")
    tuned = result.get("compile_max_autotune", {}).get("median_ms")
    print(f"{os.path.basename(args.op)}: eager {eager:.4f} ms"
          + (f", torch.compile {comp:.4f} ms" if comp is not None else "")
          + (f", max-autotune-no-cudagraphs {tuned:.4f} ms" if tuned is not None else ""),
          file=sys.stderr)
    return 0
