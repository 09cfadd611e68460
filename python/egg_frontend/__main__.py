"""Command line: ``python3 -m egg_frontend trace --op <abs op.py> --out <dir> [--seeds N]``.

Exit 0: spec.json and refs/ written.  Exit 1: the op is at fault; error.json and one
``egg: error: <file>:<line>: <op>: <message>`` line (plus a hint) on stderr.  Exit 2:
an internal error.  Files of a failed run are removed again, except error.json.
"""

import argparse
import json
import os
import sys
import warnings

warnings.filterwarnings("ignore", message=".*Failed to initialize NumPy.*")

from .errors import FrontendError, UserError, internal_from, report, write_error  # noqa: E402


def _parser():
    p = argparse.ArgumentParser(prog="python3 -m egg_frontend",
                                description="EGG op frontend: trace a KernelBench op.py")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("trace", help="write spec.json and refs/ for an op.py")
    t.add_argument("--op", required=True, help="absolute path of op.py")
    t.add_argument("--out", required=True, help="work directory to write into")
    t.add_argument("--no-refs", action="store_true",
                   help="trace only: no reference tensors (nothing will verify against them)")
    t.add_argument("--seeds", type=int, default=3,
                   help="seeded input sets beyond the declared one (default 3)")
    t.add_argument("--ref-device", choices=("cpu", "cuda"), default="cpu",
                   help="where shapes and reference outputs are computed (default cpu); cuda "
                        "computes them with full-fp32 math (no TF32) and falls back to the CPU "
                        "when the model does not run there")
    return p


def _remove(paths):
    for path in paths:
        try:
            os.remove(path)
        except OSError:
            pass


def _write_json(path, obj, written):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1, allow_nan=False)
        f.write("\n")
    os.replace(tmp, path)
    written.append(path)


def trace(op_path, out_dir, seeds, with_refs=True, ref_device="cpu"):
    """Do the work of ``trace``; raises FrontendError.  ``written`` lists files created.

    With ``ref_device="cuda"`` (and a GPU) the model runs there; a model that fails there (a
    tensor created on the CPU inside forward, say) is traced again on the CPU."""
    with warnings.catch_warnings():  # torch warns when numpy is absent; irrelevant here
        warnings.filterwarnings("ignore", message=".*Failed to initialize NumPy.*")
        import torch
    if ref_device == "cuda" and torch.cuda.is_available():
        # References are the exact fp32 results: no TF32 anywhere (kernels that opt in to TF32
        # are checked at a matching tolerance instead).
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        try:
            return _trace_on(op_path, out_dir, seeds, with_refs, "cuda")
        except UserError as e:
            print("egg: note: the model does not run on the GPU (%s); computing references on "
                  "the CPU" % e.message.splitlines()[0], file=sys.stderr)
    return _trace_on(op_path, out_dir, seeds, with_refs, "cpu")


def _trace_on(op_path, out_dir, seeds, with_refs, device):
    from . import deps, loader, refs, spec, tracer

    written = []
    try:
        op = loader.load(op_path)
        try:
            loader.build_model(op)
            inputs0 = loader.get_inputs(op, 0)
            user_files = [op.path] + op.local_files()
            gm = tracer.trace(op, user_files)
            _check_arity(op, gm, inputs0)
            if device != "cpu":
                op.model.to(device)
                gm.to(device)
            try:
                loader.reset_state(op)
                tracer.propagate(gm, [t.to(device, copy=True) for t in inputs0])
            except tracer.NodeFailure as f:
                raise _node_error(op, gm, f, user_files)
            params = spec.collect_params(op.model, gm)
            doc = spec.build(op, gm, inputs0, params, user_files)
            n_out = len(doc["outputs"])
            doc["deps"] = None
            reference = {"params": None, "sets": []}
            if with_refs:
                reference["device"] = device
                reference["params"] = refs.write_params(out_dir, params, written, op.initial_state)
            for k in range(seeds + 1 if with_refs else 0):
                inputs = inputs0 if k == 0 else loader.get_inputs(op, k)
                outs = refs.run_eager(op, [t.to(device) for t in inputs], k, n_out, user_files)
                rel = refs.write_set(out_dir, k, inputs, outs, written)
                reference["sets"].append({"file": rel, "seed": k, "declared": k == 0})
            doc["deps"] = deps.deps_list(op.path, op.local_files())
            doc["reference"] = reference
            _write_json(os.path.join(out_dir, "spec.json"), doc, written)
        finally:
            op.close()
    except BaseException:
        _remove(written)
        _remove_refs(out_dir)
        raise
    if with_refs:
        _remove_stale_sets(out_dir, seeds)
    else:
        _remove_refs(out_dir)  # references of an earlier run would not match this spec


def _remove_refs(out_dir):
    """After a failure, reference files of an earlier run are stale too: remove them."""
    folder = os.path.join(out_dir, "refs")
    if os.path.isdir(folder):
        _remove([os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".pt")])
        try:
            os.rmdir(folder)
        except OSError:
            pass


def _remove_stale_sets(out_dir, seeds):
    folder = os.path.join(out_dir, "refs")
    keep = {"params.pt"} | {"set%d.pt" % k for k in range(seeds + 1)}
    for name in os.listdir(folder):
        if name not in keep and name.endswith(".pt"):
            _remove([os.path.join(folder, name)])


def _check_arity(op, gm, inputs):
    ph = [n for n in gm.graph.nodes if n.op == "placeholder"]
    required = [n for n in ph if not n.args]
    if len(inputs) > len(ph) or len(inputs) < len(required):
        raise UserError(op.path, op.def_line("get_inputs"), "get_inputs",
                        "get_inputs() returns %d tensors but forward takes %d inputs (%s)"
                        % (len(inputs), len(ph), ", ".join(str(n.target) for n in ph)),
                        "return exactly one tensor per forward argument, in order")


def _node_error(op, gm, failure, user_files):
    from . import canonical, errors, tracer
    node = failure.node
    modules = dict(gm.named_modules())
    module = modules.get(node.target) if node.op == "call_module" else None
    try:
        name = canonical.canonicalize(node, module, node.target if module else "").op
    except Exception:
        name = str(node.target)
    file, line, _ = tracer.location(node, user_files)
    return UserError(file or op.path, line, name,
                     "forward failed on the declared inputs: %s" % errors.describe(failure.exc),
                     "check the shapes and dtypes get_inputs() gives this op")


def main(argv=None):
    """Run the command line; returns the exit status (never raises)."""
    args = _parser().parse_args(argv)
    out_dir = os.path.abspath(args.out)
    op_path = os.path.abspath(args.op)
    try:
        os.makedirs(out_dir, exist_ok=True)
        _remove([os.path.join(out_dir, "error.json"), os.path.join(out_dir, "spec.json")])
        if args.seeds < 0:
            raise UserError(op_path, 0, "--seeds", "--seeds must be >= 0", "pass --seeds 3")
        trace(op_path, out_dir, args.seeds, not args.no_refs, args.ref_device)
        return 0
    except FrontendError as e:
        err = e
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: B902 - a bug must still produce error.json
        err = internal_from(e)
    if not err.file:
        err.file = op_path
    write_error(out_dir, err)
    report(err)
    return err.exit_code


if __name__ == "__main__":
    sys.exit(main())
