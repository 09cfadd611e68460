"""Writes spec.json for a KernelBench-style op.py, as docs/SPEC.md describes, for the harness
tests. It is a test fixture, independent of python/egg_frontend's tracer on purpose: the harness
tests must not break while the frontend changes. It writes no `nodes` (the harness needs none);
the reference sets come from the reference server (`python3 -m egg_frontend serve`).

usage: python3 make_spec.py --op op.py --out DIR [--seeds N]
"""
import argparse
import importlib.util
import inspect
import json
import os
import sys

import torch

DTYPES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
          torch.float64: "float64", torch.int64: "int64", torch.int32: "int32", torch.int8: "int8",
          torch.uint8: "uint8", torch.bool: "bool"}


def decl(name, t):
    return {"name": name, "shape": list(t.shape), "dtype": DTYPES[t.dtype]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--op", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seeds", type=int, default=3)
    a = p.parse_args()
    spec = importlib.util.spec_from_file_location("egg_test_op", a.op)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    model = mod.Model(*mod.get_init_inputs()).eval()
    os.makedirs(a.out, exist_ok=True)
    params = dict(model.named_parameters())
    params.update(dict(model.named_buffers()))
    names = [n for n in inspect.signature(model.forward).parameters]
    # Shapes and dtypes only: on the meta device no data is made, whatever the op's size.
    torch.manual_seed(0)
    with torch.device("meta"):
        inputs0 = [t.contiguous() for t in mod.get_inputs()]
    with torch.no_grad():
        out = model.to("meta")(*inputs0)
    outputs0 = [o.contiguous() for o in (out if isinstance(out, (list, tuple)) else [out])]
    doc = {
        "schema": 2, "op_file": os.path.abspath(a.op), "model_class": "Model",
        "init_inputs": list(mod.get_init_inputs()),
        "inputs": [decl(n, t) for n, t in zip(names, inputs0)],
        "params": [dict(decl(n, t), kind="parameter" if n in dict(model.named_parameters()) else "buffer")
                   for n, t in params.items()],
        "nodes": [],
        "outputs": [decl(f"out{i}", t) for i, t in enumerate(outputs0)],
        "deps": [os.path.abspath(a.op)],
        "reference": {"seeds": a.seeds},
    }
    with open(os.path.join(a.out, "spec.json"), "w") as f:
        json.dump(doc, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
