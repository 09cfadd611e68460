#!/usr/bin/env python3
"""Every candidate each op measured, from the manifests of a bench run (stage, candidate, status,
event-timed ms, a failure's first line, the winner marked, and the verify step's rejections), e.g.
after tools/gpu_suite.sh:

    python3 tools/attempts.py gpu-suite-out/manifests.tgz            # or a build-suite/ folder
    python3 tools/attempts.py build-suite --op red_sum_dim1 --op loss_mse
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", help="manifests.tgz or a folder with <op>/.../manifest.json")
    ap.add_argument("--op", action="append", default=[], help="only these ops (repeatable)")
    args = ap.parse_args(argv)
    found = False
    for op, m in sorted(manifests(args.source), key=lambda t: t[0]):
        if args.op and op not in args.op:
            continue
        found = True
        print("%s  winner: %s" % (op, m.get("candidate", "-")))
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
