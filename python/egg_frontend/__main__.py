"""Command line: ``python3 -m egg_frontend trace --op <abs op.py> --out <dir> [--seeds N]`` and
``python3 -m egg_frontend serve ...`` (the reference server, refserver.py).

Exit 0: spec.json written.  Exit 1: the op is at fault; error.json and one
``egg: error: <file>:<line>: <op>: <message>`` line (plus a hint) on stderr.  Exit 2:
an internal error.  Files of a failed run are removed again, except error.json.
"""

import argparse
import json
import os
import sys
import time
import warnings

warnings.filterwarnings("ignore", message=".*Failed to initialize NumPy.*")

from .errors import (FrontendError, UserError, from_exit, internal_from, report,  # noqa: E402
                     require_torch, write_error)


def _parser():
    p = argparse.ArgumentParser(prog="python3 -m egg_frontend",
                                description="EGG op frontend: trace a KernelBench op.py")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("trace", help="write spec.json for an op.py")
    t.add_argument("--op", required=True, help="absolute path of op.py")
    t.add_argument("--out", required=True, help="work directory to write into")
    t.add_argument("--seeds", type=int, default=3,
                   help="seeded input sets beyond the declared one (default 3)")
    s = sub.add_parser("serve", help="serve the op's reference sets from the GPU (refserver.py)")
    s.add_argument("--op", required=True, help="absolute path of op.py")
    s.add_argument("--spec", required=True, help="the spec.json trace wrote")
    s.add_argument("--socket", required=True, help="Unix socket to listen on")
    s.add_argument("--ready", required=True, help="JSON file written once the server is ready")
    s.add_argument("--seeds", type=int, default=3,
                   help="seeded input sets beyond the declared one (default 3)")
    s.add_argument("--ref-device", choices=("cuda", "cpu"), default="cuda",
                   help="where PyTorch computes the references (default cuda; cpu for accuracy "
                        "audits: its reductions and scans accumulate in double for fp32)")
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


def trace(op_path, out_dir, seeds):
    """Do the work of ``trace``: spec.json, captured with torch.export without data where possible.

    The declared inputs are made on the meta device and the model is exported on fake tensors
    of their shapes (no memory, no arithmetic, whatever the op's size); a get_inputs() that
    cannot run on the meta device (it needs real data) is called again on the CPU. Where the
    time went goes to trace_times.json beside it (seconds per part; egg-gen's manifest shows them
    as `phases.trace_<part>`), outside the spec, whose bytes are the cache key's."""
    times = {}
    mark = [time.perf_counter()]

    def lap(part):
        now = time.perf_counter()
        times[part] = now - mark[0]
        mark[0] = now

    with warnings.catch_warnings():  # torch warns when numpy is absent; irrelevant here
        warnings.filterwarnings("ignore", message=".*Failed to initialize NumPy.*")
        try:
            import torch  # noqa: F401
        except ImportError as e:
            raise UserError(op_path, 0, "torch",
                            "the Python %s cannot import torch (%s); EGG reads op.py with PyTorch"
                            % (sys.executable, e),
                            "point egg-gen at a Python that has torch (EGG_PYTHON=/path/to/python "
                            "or --python), or install it: %s -m pip install torch==2.11.0 (a "
                            "system Python that refuses: python3 -m venv <dir> && <dir>/bin/pip "
                            "install torch==2.11.0, then EGG_PYTHON=<dir>/bin/python)"
                            % sys.executable) from None
    from . import deps, loader, spec, tracer
    lap("import")

    written = []
    try:
        op = loader.load(op_path)
        try:
            loader.build_model(op)
            lap("model")
            user_files = [op.path] + op.local_files()
            try:
                inputs0 = loader.get_inputs(op, 0, "meta")
            except Exception:  # noqa: B902 - needs real data (its own error is found again)
                inputs0 = loader.get_inputs(op, 0)
            tracer.check_arity(op, inputs0)
            loader.reset_state(op)
            lap("inputs")
            ep = tracer.capture(op, inputs0, user_files)
            lap("capture")
            loader.reset_state(op)
            tracer.warn_mutations(ep, op, user_files)
            params = spec.collect_params(op.model, spec.constant_names(ep, op, user_files))
            doc = spec.build(op, ep, inputs0, params, user_files)
            doc["deps"] = deps.deps_list(op.path, op.local_files())
            doc["reference"] = {"seeds": seeds}
            numbers = loader.numbers(inputs0)
            if numbers:
                # The kernel is specialized to these forward inputs; every set must give them.
                doc["reference"]["numbers"] = [[i, v] for i, v in numbers]
            _write_json(os.path.join(out_dir, "spec.json"), doc, written)
            lap("spec")
            _write_json(os.path.join(out_dir, "trace_times.json"), times, written)
        finally:
            op.close()
    except BaseException:
        _remove(written)
        raise


def main(argv=None):
    """Run the command line; returns the exit status (never raises)."""
    args = _parser().parse_args(argv)
    if args.command == "serve":
        from . import refserver
        return refserver.serve(os.path.abspath(args.op), os.path.abspath(args.spec),
                               args.socket, args.ready, args.seeds, args.ref_device)
    out_dir = os.path.abspath(args.out)
    op_path = os.path.abspath(args.op)
    try:
        os.makedirs(out_dir, exist_ok=True)
        _remove([os.path.join(out_dir, f) for f in ("error.json", "spec.json", "trace_times.json")])
        if args.seeds < 0:
            raise UserError(op_path, 0, "--seeds", "--seeds must be >= 0", "pass --seeds 3")
        require_torch(op_path)
        trace(op_path, out_dir, args.seeds)
        return 0
    except FrontendError as e:
        err = e
    except KeyboardInterrupt:
        raise
    except SystemExit as e:
        err = from_exit(e, op_path)
    except BaseException as e:  # noqa: B902 - a bug must still produce error.json
        err = internal_from(e)
    if not err.file:
        err.file = op_path
    write_error(out_dir, err)
    report(err)
    return err.exit_code


if __name__ == "__main__":
    sys.exit(main())
