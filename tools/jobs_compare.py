#!/usr/bin/env python3
"""Issue 11's parallel-build check: the verdicts of two `egg-gen bench` runs of the same ops side by
side (rows.jsonl of each, e.g. one at -j 12 and one at -j 1). A verdict is whether the op verified
and, if not, its failure's first words; winners and times may differ (timing noise), verdicts may
not. Exit status 1 when a verdict differs.

    python3 tools/jobs_compare.py j12/rows.jsonl j1/rows.jsonl [--labels "-j 12" "-j 1"]
"""
import argparse
import json
import sys


def rows(path):
    with open(path) as f:
        return {r["op"]: r for r in (json.loads(l) for l in f if l.strip())}


def verdict(r):
    if r["verified"]:
        return "verified"
    return "NOT: " + " ".join(str(r.get("status", "")).split()[:6])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("many")
    ap.add_argument("one")
    ap.add_argument("--labels", nargs=2, default=["-j 12", "-j 1"])
    a = ap.parse_args()
    many, one = rows(a.many), rows(a.one)
    both = sorted(set(many) & set(one))
    diff = 0
    l1, l2 = a.labels
    print("%-44s %-10s %-10s %7s %7s  %s" % ("op", l1, l2, "gen s", "gen s", "winners (%s / %s)" % (l1, l2)))
    for op in both:
        x, y = many[op], one[op]
        same = verdict(x) == verdict(y)
        diff += not same
        print("%-44s %-10s %-10s %7.0f %7.0f  %s / %s%s" % (
            op, verdict(x)[:10], verdict(y)[:10], x.get("generate_s") or 0, y.get("generate_s") or 0,
            x.get("candidate", "-"), y.get("candidate", "-"),
            "" if same else "   DIFFERENT: %s | %s" % (verdict(x), verdict(y))))
    print("compared %d ops: %d verdicts differ" % (len(both), diff))
    for name, only in ((l1, set(many) - set(one)), (l2, set(one) - set(many))):
        if only:
            print("finished only at %s: %s" % (name, " ".join(sorted(only))))
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
