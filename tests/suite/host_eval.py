"""Checks kernels EGG generated for op.py files against PyTorch on the CPU: an element-wise
kernel's per-element program (the fusion IR's index math: views, slices, cat, stack, split, flip,
triu, broadcasting), a sort kernel's bitonic network row by row, or an integer reduction's
prologue, reducer and scan row by row, is compiled for the host with
nvcc (EGG_HOST_EVAL, host_eval_driver.cu), run over every output, and compared with the op's own
forward (integer outputs exactly). No GPU is needed.

usage: host_eval.py --nvcc NVCC --bench-out DIR --work DIR op.py...
  DIR/<name>/<name>.cu and DIR/<name>/include/ are what `egg-gen bench --out DIR` wrote.
"""

import argparse
import contextlib
import os
import re
import subprocess
import sys

import torch

from egg_frontend import loader, refs, rng

HERE = os.path.dirname(os.path.abspath(__file__))
TOL = {torch.float32: (1e-5, 1e-5), torch.float16: (1e-2, 1e-2), torch.bfloat16: (2e-2, 2e-2)}


def contract(header):
    """The launch() arguments in order: (role, tensor name) from the header's comments (a
    module's parameter keeps its dots: `tok.weight`)."""
    text = open(header).read()
    return re.findall(r"^// (input|parameter|output|random state) ([\w.]+): ", text, re.M)


def c_name(name):
    return re.sub(r"\W", "_", name)


def check(op_path, args):
    name = os.path.splitext(os.path.basename(op_path))[0]
    out_dir = os.path.join(args.bench_out, name)
    cu = os.path.join(out_dir, name + ".cu")
    if "egg_host_eval" not in open(cu).read():
        return "%s: no host program (egg_host_eval) in %s" % (name, cu)
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    op = loader.load(op_path)
    model = loader.build_model(op)
    inputs = loader.get_inputs(op, seed=1)
    roles = contract(os.path.join(out_dir, "include", "egg", name + ".h"))
    # Dropout draws from the kernel's [seed, offset] input; PyTorch draws the same (rng.py).
    state = rng.state(1, "cpu") if any(r == "random state" for r, _ in roles) else None
    with torch.inference_mode(), refs.StableOrder(), (rng.drawing(state) if state is not None
                                                      else contextlib.nullcontext()):
        expected = model(*inputs)
    if isinstance(expected, torch.Tensor):
        expected = (expected,)
    named = dict((c_name(k), v) for k, v in list(model.named_parameters()) +
                 list(model.named_buffers()))
    files, outs = [], []
    inputs_left = list(inputs)
    for role, var in roles:
        if role == "output":
            continue
        t = (inputs_left.pop(0) if role == "input" else state if role == "random state"
             else named[c_name(var)])
        path = os.path.join(work, c_name(var) + ".bin")
        t.detach().contiguous().view(-1).view(torch.uint8).numpy().tofile(path)
        files.append(path)
    for k, e in enumerate(expected):
        outs += [os.path.join(work, "out%d.bin" % k), str(e.numel() * e.element_size())]
    exe = os.path.join(work, "driver")
    subprocess.run([args.nvcc, "-std=c++17", "-O2", "-arch=sm_90",
                    "-DEGG_KERNEL_CU=\"%s\"" % cu, "-I", os.path.join(out_dir, "include"),
                    os.path.join(HERE, "host_eval_driver.cu"), "-o", exe], check=True)
    n = expected[0].numel()
    subprocess.run([exe, str(n), str(len(files))] + files + [str(len(expected))] + outs,
                   check=True)
    problems = []
    for k, e in enumerate(expected):
        raw = torch.from_file(outs[2 * k], size=e.numel() * e.element_size(), dtype=torch.uint8)
        got = raw.view(e.dtype).view(e.shape)
        atol, rtol = TOL.get(e.dtype, (0, 0))  # integers (indices): exact
        got_d, e_d = got.double(), e.double()
        if not torch.allclose(got_d, e_d, atol=atol, rtol=rtol, equal_nan=True):
            bad = (~torch.isclose(got_d, e_d, atol=atol, rtol=rtol,
                                  equal_nan=True)).nonzero()[0].tolist()
            problems.append("%s: output %d differs at %s: %r, PyTorch %r" %
                            (name, k, bad, got[tuple(bad)].item(), e[tuple(bad)].item()))
    print("%s: %s" % (name, "ok" if not problems else "MISMATCH"), flush=True)
    return "\n".join(problems)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nvcc", required=True)
    p.add_argument("--bench-out", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("ops", nargs="+")
    args = p.parse_args()
    failures = [f for f in (check(op, args) for op in args.ops) if f]
    for f in failures:
        print(f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
