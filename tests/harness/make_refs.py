"""Writes spec.json and refs/ for a KernelBench-style op.py, as docs/SPEC.md describes, for the
harness tests. It is a test fixture, independent of python/egg_frontend on purpose: the harness
tests must not break while the frontend changes. It writes no `nodes` (the harness needs none).

usage: python3 make_refs.py --op op.py --out DIR [--seeds N]
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
    os.makedirs(os.path.join(a.out, "refs"), exist_ok=True)
    params = dict(model.named_parameters())
    params.update(dict(model.named_buffers()))
    torch.save({k: v.detach().contiguous() for k, v in params.items()}, os.path.join(a.out, "refs", "params.pt"))
    names = [n for n in inspect.signature(model.forward).parameters]
    sets, inputs0, outputs0 = [], None, None
    for k in range(a.seeds + 1):
        torch.manual_seed(k)
        inputs = [t.contiguous() for t in mod.get_inputs()]
        with torch.no_grad():
            out = model(*inputs)
        outputs = [o.contiguous() for o in (out if isinstance(out, (list, tuple)) else [out])]
        torch.save({"inputs": inputs, "outputs": outputs}, os.path.join(a.out, "refs", f"set{k}.pt"))
        sets.append({"file": f"refs/set{k}.pt", "seed": k, "declared": k == 0})
        if k == 0:
            inputs0, outputs0 = inputs, outputs
    doc = {
        "schema": 1, "op_file": os.path.abspath(a.op), "model_class": "Model",
        "init_inputs": list(mod.get_init_inputs()),
        "inputs": [decl(n, t) for n, t in zip(names, inputs0)],
        "params": [dict(decl(n, t), kind="parameter" if n in dict(model.named_parameters()) else "buffer")
                   for n, t in params.items()],
        "nodes": [],
        "outputs": [decl(f"out{i}", t) for i, t in enumerate(outputs0)],
        "deps": [os.path.abspath(a.op)],
        "reference": {"params": "refs/params.pt", "sets": sets},
    }
    with open(os.path.join(a.out, "spec.json"), "w") as f:
        json.dump(doc, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
