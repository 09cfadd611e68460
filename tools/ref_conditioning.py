#!/usr/bin/env python3
"""How well PyTorch's own result is determined: one op.py's forward on the GPU with PyTorch's
default flags (TF32 convolutions), with TF32 off, and in float64, same weights and inputs.

    python3 tools/ref_conditioning.py kb/level3/24_EfficientNetB2.py [...]

Prints per op and output the max abs difference of default and TF32-off against float64 and the
largest |float64 value|: where PyTorch's two fp32 results already differ beyond a verification
tolerance, the problem is ill-conditioned at that tolerance (a candidate's mismatch there says
little about the candidate)."""
import argparse
import copy
import importlib.util
import json
import sys

import torch


def load(path):
    spec = importlib.util.spec_from_file_location("op_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def outputs(r):
    return [t for t in (r if isinstance(r, (tuple, list)) else [r]) if torch.is_tensor(t)]


def run(model, inputs, tf32):
    torch.backends.cudnn.allow_tf32 = tf32
    with torch.no_grad():
        return [o.detach().clone() for o in outputs(model(*inputs))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ops", nargs="+")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    for path in args.ops:
        mod = load(path)
        torch.manual_seed(args.seed)
        model = mod.Model(*mod.get_init_inputs())
        torch.manual_seed(args.seed)
        inputs = mod.get_inputs()
        model = model.to(args.device)
        dev = [x.to(args.device) if torch.is_tensor(x) else x for x in inputs]
        state = copy.deepcopy(model.state_dict())
        default = run(model, dev, tf32=True)
        model.load_state_dict(state)
        exact = run(model, dev, tf32=False)
        m64 = copy.deepcopy(model).double()
        m64.load_state_dict({k: v.double() if v.is_floating_point() else v for k, v in state.items()})
        ref64 = run(m64, [x.double() if torch.is_tensor(x) and x.is_floating_point() else x for x in dev],
                    tf32=False)
        torch.backends.cudnn.allow_tf32 = True
        for k, (d, e, r) in enumerate(zip(default, exact, ref64)):
            r = r.to(d.dtype) if not d.is_floating_point() else r
            print(json.dumps({
                "op": path, "output": k, "shape": list(d.shape),
                "max_abs_ref64": float(r.abs().max()),
                "default_vs_fp64": float((d.double() - r.double()).abs().max()),
                "tf32_off_vs_fp64": float((e.double() - r.double()).abs().max()),
                "default_vs_tf32_off": float((d.double() - e.double()).abs().max()),
            }), flush=True)
        del model, m64
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
