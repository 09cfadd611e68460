# Candidates dumped on the CPU machine against PyTorch on the GPU, in one process: each <n>.cu of a
# folder written by the `Families.DumpEveryCandidateForNvcc` unit test (with its include/egg/k.h
# and <n>.id) is compiled into a shared library, called through `egg_candidate_launch` on the op's
# declared inputs (inputs, then the model's parameters and buffers, then the output: launch()'s
# order for ops of one output whose parameters the spec lists in the model's order), checked
# against the model's output and timed the same way as eager PyTorch (bench/micro/cold_timing.py:
# L2 flushed, CUDA events, median of 30). The PyTorch kernels a call runs are listed by the
# profiler. With --ncu-names, nothing is timed: each candidate and eager run 3 times (for ncu).
#
#   python3 bench/micro/candidates_torch.py OP.py DUMP_DIR [--only 0,3] [--compile] [--ncu-names]
import argparse
import concurrent.futures
import ctypes
import glob
import hashlib
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "python")]
from cold_timing import cold_ms  # noqa: E402
# The op, its model and inputs as the product's baselines make them (train mode as built, set 0
# made on the GPU under seed 0).
from egg_bench.baseline import build_model, load_op, make_inputs  # noqa: E402


def nvcc_command(cu, include, so):
    """The harness verifier's nvcc line (generator/verify/harness_verifier.cpp): the entry
    egg_candidate_launch exists only under -DEGG_CANDIDATE_ENTRY; sm_90a where the source uses
    wgmma."""
    src = open(cu).read()
    libs = [flag for header, flag in (("cublasLt.h", "-lcublasLt"), ("cublas_v2.h", "-lcublas"))
            if header in src]
    if "cudnn.h" in src:  # PyTorch's cuDNN (EGG_CUDNN_ROOT, as the generator finds it)
        import nvidia.cudnn
        root = os.environ.get("EGG_CUDNN_ROOT", list(nvidia.cudnn.__path__)[0])
        libs += ["-I", root + "/include", "-L", root + "/lib", "-Xlinker", "-rpath=" + root + "/lib",
                 "-l:libcudnn.so.9"]
    arch = "90a" if "wgmma" in src else "90"  # the wgmma kernels compile for sm_90a only
    return ["nvcc", "-shared", "-Xcompiler", "-fPIC", "-DEGG_CANDIDATE_ENTRY", "-O3", "-std=c++17",
            "-gencode", "arch=compute_%s,code=sm_%s" % (arch, arch), "-I", include, cu, "-o", so] + libs


def build(cu, include, out_dir="/tmp"):
    """Compiles one dumped candidate; returns (path of the .so, "") or (None, nvcc's error). The
    library is named by its source, headers and nvcc line, and one already in `out_dir` is reused
    (compiled on the CPU machine, carried to the GPU machine)."""
    key = hashlib.sha256()
    for path in [cu] + sorted(glob.glob(os.path.join(include, "**", "*.h"), recursive=True)):
        with open(path, "rb") as f:
            key.update(f.read())
    flags = [{cu: "CU", include: "INCLUDE"}.get(arg, arg) for arg in nvcc_command(cu, include, "SO")]
    key.update(" ".join(flags).encode())  # the line without this machine's paths
    so = os.path.join(out_dir, "egg-cand-%s-%s-%s.so" % (os.path.basename(os.path.dirname(cu)),
                                                         os.path.basename(cu)[:-3], key.hexdigest()[:12]))
    if os.path.exists(so):
        return so, ""
    try:
        r = subprocess.run(nvcc_command(cu, include, so), capture_output=True, text=True)
    except OSError as e:  # no nvcc on PATH
        return None, "cannot run nvcc: %s" % e
    if r.returncode != 0:
        return None, r.stderr[-600:]
    return so, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("op")
    ap.add_argument("dump")
    ap.add_argument("--only", default="")
    ap.add_argument("--ncu-names", action="store_true")
    ap.add_argument("--compile", action="store_true", help="also time torch.compile (default mode)")
    ap.add_argument("--so-dir", default="/tmp", help="where the libraries go (and are reused from)")
    a = ap.parse_args()
    mod = load_op(a.op)
    model = build_model(mod).cuda()
    inputs = make_inputs(mod)
    only = {int(x) for x in a.only.split(",") if x}
    with torch.inference_mode():
        ref = model(*inputs)
        params = list(model.parameters()) + list(model.buffers())
        eager = cold_ms(lambda: model(*inputs)) if not a.ncu_names else None
        if not a.ncu_names:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                model(*inputs)
                torch.cuda.synchronize()
            names = sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
            print("%s: eager %.4f ms; kernels: %s" % (os.path.basename(a.op), eager, " | ".join(n[:90] for n in names)))
            if a.compile:
                compiled = torch.compile(model)
                compiled(*inputs)
                print("%s: torch.compile %.4f ms" % (os.path.basename(a.op), cold_ms(lambda: compiled(*inputs))))
        else:
            for _ in range(3):
                model(*inputs)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        cus = [cu for cu in sorted(glob.glob(os.path.join(a.dump, "*.cu")),
                                   key=lambda p: int(os.path.basename(p)[:-3]))
               if not only or int(os.path.basename(cu)[:-3]) in only]
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:  # nvcc side by side
            built = list(pool.map(lambda cu: build(cu, os.path.join(a.dump, "include"), a.so_dir), cus))
        for cu, (so, err) in zip(cus, built):
            n = int(os.path.basename(cu)[:-3])
            cid = open(cu[:-3] + ".id").read().strip()
            if so is None:
                print("  %2d %-40s nvcc failed: %s" % (n, cid, err))
                continue
            lib = ctypes.CDLL(so)
            out = torch.empty_like(ref)
            args = [t.data_ptr() for t in inputs + params] + [out.data_ptr()]
            argv = (ctypes.c_void_p * len(args))(*args)

            def call():
                rc = lib.egg_candidate_launch(argv, stream)
                if rc != 0:
                    raise RuntimeError("launch returned %d" % rc)

            try:
                call()
                torch.cuda.synchronize()
            except RuntimeError as e:
                print("  %2d %-40s %s" % (n, cid, e))
                continue
            err = (out.float() - ref.float()).abs().max().item()
            if a.ncu_names:
                for _ in range(2):
                    call()
                torch.cuda.synchronize()
                print("  %2d %-40s max err %.3g" % (n, cid, err))
                continue
            ms = cold_ms(call)
            print("  %2d %-40s %8.4f ms  %5.2fx eager  max err %.3g" % (n, cid, ms, eager / ms, err))


if __name__ == "__main__":
    main()
