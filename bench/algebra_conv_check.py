#!/usr/bin/env python3
"""Checks the conv global-sum rewrite (generator/backend/builtin/algebra_conv.h) numerically on the
CPU: traces each op.py, has the unit-test binary write the rewritten graph
(AlgebraConv.DumpRewrittenSpecs), evaluates that graph in float64 with PyTorch and compares it with
the model's own output in float64 (same weights and inputs). The rewrite is exact algebra, so the
two agree to float64 rounding.

  python3 bench/algebra_conv_check.py --unit build/tests/unit/egg_unit_tests \\
      examples/suite/conv_global_mean.py kb/level2/44_*.py
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import torch


def load(path):
    spec = importlib.util.spec_from_file_location("op", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def arg(a, env):
    if "list" in a:
        return [arg(x, env) for x in a["list"]]
    return env[a["node"]] if "node" in a else a["scalar"]


def evaluate(graph, env):
    """Runs the rewritten graph's nodes (the ops the rewrite writes and those it keeps)."""
    for n in graph["nodes"]:
        a = [arg(x, env) for x in n["args"]]
        at = n["attrs"] or {}
        op = n["op"]
        if op == "arange":
            v = torch.arange(at["start"], at["end"], at["step"], dtype=torch.int64)
        elif op in ("reshape",):
            v = a[0].reshape(at["shape"])
        elif op == "unsqueeze":
            v = a[0].unsqueeze(at["dim"])
        elif op == "permute":
            v = a[0].permute(at["dims"])
        elif op == "select":
            v = a[0].select(at["dim"], at["index"])
        elif op == "stack":
            v = torch.stack(a[0], dim=at["dim"])
        elif op in ("mul", "div", "add", "sub", "remainder", "ge", "lt", "eq", "logical_and"):
            x, y = a
            if isinstance(y, float) and not torch.is_floating_point(x) and y == int(y):
                y = int(y)
            alpha = at.get("alpha", 1)
            v = {"mul": lambda: x * y, "div": lambda: x / y, "add": lambda: x + alpha * y,
                 "sub": lambda: x - alpha * y, "remainder": lambda: torch.remainder(x, y),
                 "ge": lambda: x >= y, "lt": lambda: x < y, "eq": lambda: x == y,
                 "logical_and": lambda: torch.logical_and(x, y)}[op]()
        elif op in ("sum", "mean", "logsumexp", "amax"):
            dim = at.get("dim")
            kw = {"keepdim": at.get("keepdim", False)}
            fn = {"sum": torch.sum, "mean": torch.mean, "logsumexp": torch.logsumexp,
                  "amax": torch.amax}[op]
            v = fn(a[0], dim=tuple(dim) if dim is not None else tuple(range(a[0].dim())), **kw)
        elif op == "linear":
            v = torch.nn.functional.linear(*a)
        elif op in ("sigmoid", "tanh", "relu", "exp", "log"):
            v = getattr(torch, op)(a[0])
        else:
            raise SystemExit(f"algebra_conv_check: no evaluator for op {op} (node {n['name']})")
        if list(v.shape) != list(n["shape"]):
            raise SystemExit(f"algebra_conv_check: {n['name']} ({op}) has shape {list(v.shape)}, "
                             f"the graph says {n['shape']}")
        env[n["name"]] = v
    return env[graph["output"]]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--unit", required=True, help="the egg_unit_tests binary")
    p.add_argument("ops", nargs="+")
    args = p.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    work = tempfile.mkdtemp(prefix="algebra_conv_")
    specs, out = os.path.join(work, "specs"), os.path.join(work, "out")
    names = {}
    for path in args.ops:
        name = os.path.splitext(os.path.basename(path))[0]
        names[name] = path
        subprocess.run([sys.executable, "-m", "egg_frontend", "trace", "--op", path, "--out",
                        os.path.join(specs, name)], check=True, stdout=subprocess.DEVNULL,
                       env=dict(os.environ, PYTHONPATH=os.path.join(root, "python")))
    subprocess.run([args.unit, "--gtest_filter=AlgebraConv.DumpRewrittenSpecs"], check=True,
                   stdout=subprocess.DEVNULL,
                   env=dict(os.environ, EGG_ALGEBRA_SPEC_DIR=specs, EGG_ALGEBRA_OUT_DIR=out))
    worst = 0.0
    for name, path in names.items():
        graph_path = os.path.join(out, name + ".json")
        if not os.path.exists(graph_path):
            print(f"{name}: not rewritten")
            continue
        graph = json.load(open(graph_path))
        mod = load(path)
        torch.manual_seed(0)
        model = mod.Model(*mod.get_init_inputs()).double().eval()
        torch.manual_seed(1)
        inputs = [x.double() for x in mod.get_inputs()]
        spec = json.load(open(os.path.join(specs, name, "spec.json")))
        env = {}
        for t, x in zip(spec["inputs"], inputs):
            env[t["name"]] = x
        params = dict(model.named_parameters())
        params.update(dict(model.named_buffers()))
        for t in spec["params"]:
            env[t["name"]] = params[t["name"]].detach()
        with torch.no_grad():
            want = model(*inputs)
            got = evaluate(graph, env)
        err = (got - want).abs().max().item() / max(want.abs().max().item(), 1e-300)
        worst = max(worst, err)
        print(f"{name}: {len(graph['nodes'])} nodes, max relative error {err:.3e} (float64)")
    return 0 if worst < 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
