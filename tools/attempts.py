#!/usr/bin/env python3
"""Every candidate each op measured, from the manifests of a bench run (stage, candidate, status,
event-timed ms, a failure's first line, the winner marked, and the verify step's rejections; with
--kernels, where each measured candidate's time goes, kernel by kernel, from the harness's CUPTI
trace), e.g. after tools/gpu_suite.sh:

    python3 tools/attempts.py gpu-suite-out/manifests.tgz            # or a build-suite/ folder
    python3 tools/attempts.py build-suite --op red_sum_dim1 --op loss_mse --kernels
"""
import argparse
import json
import sys
import tarfile
from pathlib import Path


def manifests(source):
    """(op, manifest) pairs from a .tgz of manifest.json files or a folder holding them."""
    p = Path(source)
    if p.is_file():
        with tarfile.open(p) as tar:
            for m in tar.getmembers():
                if m.isfile() and m.name.endswith("manifest.json"):
                    yield Path(m.name).parts[-2], json.load(tar.extractfile(m))
        return
    for f in sorted(p.rglob("manifest.json")):
        yield f.parent.name, json.loads(f.read_text())


def event_ms(attempt):
    timing = attempt.get("profile", {}).get("harness", {}).get("timing", {})
    return timing.get("event_ms", {}).get("median")


def kernel_lines(attempt):
    """The attempt's kernels in launch order with their median GPU ms, and the gap: the event time
    less the kernels' sum (launch gaps, host functions, memsets, copies)."""
    timing = attempt.get("profile", {}).get("harness", {}).get("timing", {})
    kernels = timing.get("kernels") or []
    lines = ["      %8.4f ms  %s" % (k.get("median_ms", 0.0), k.get("name", "?")) for k in kernels]
    total = timing.get("cupti_kernel_ms", {}).get("median")
    ms = event_ms(attempt)
    if kernels and total is not None and ms is not None:
        lines.append("      %8.4f ms  (event time less the kernels' sum, %.4f ms)" % (ms - total, total))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", help="manifests.tgz or a folder with <op>/.../manifest.json")
    ap.add_argument("--op", action="append", default=[], help="only these ops (repeatable)")
    ap.add_argument("--kernels", action="store_true",
                    help="each measured candidate's kernels and their median GPU time, and the "
                         "baselines' (eager, torch.compile) from their profiles")
    args = ap.parse_args(argv)
    found = False
    for op, m in sorted(manifests(args.source), key=lambda t: t[0]):
        if args.op and op not in args.op:
            continue
        found = True
        print("%s  winner: %s" % (op, m.get("candidate", "-")))
        if args.kernels:
            for base, ks in (m.get("timing", {}).get("baseline_kernels") or {}).items():
                print("  %s, per call:" % base)
                for k in ks:
                    print("      %8.4f ms  %s" % (k.get("ms", 0.0), k.get("name", "?")))
        for k, stage in enumerate(m.get("stages", []), 1):
            for a in stage.get("attempts", []):
                status = (a.get("profile", {}).get("harness", {}).get("status") or
                          a.get("failure_class") or a.get("status", "-"))
                ms = event_ms(a)
                line = "  stage %d  %-52s %-14s %s" % (k, a.get("candidate", "-"), status,
                                                       "-" if ms is None else "%.4f ms" % ms)
                if a.get("message"):
                    line += "  " + a["message"][:160]
                print(line)
                if args.kernels:
                    print("\n".join(kernel_lines(a)) or "      (no per-kernel times recorded)")
            for r in stage.get("rejected", []):
                print("  %-8s %-52s %-14s rejected by the final check: %s" % (
                    stage.get("step", "verify"), r.get("candidate", "-"),
                    r.get("failure_class", "-"), r.get("message", "")[:160]))
    if not found:
        print("attempts.py: no manifest.json%s under %s" %
              (" for " + ", ".join(args.op) if args.op else "", args.source), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
