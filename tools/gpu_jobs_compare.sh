#!/usr/bin/env bash
# Issue 11's parallel-build check on the GPU machine in one call: the same ops through
# `egg-gen bench` at -j 12 and at -j 1 (tools/gpu_suite.sh each, same build), then their verdicts
# side by side. A verdict is whether the op verified and, if not, its failure's first words; the
# winner and the times may differ (timing noise), the verdict may not.
#
#   bash tools/gpu_jobs_compare.sh --list bench/kernelbench_jobs_sample.txt kb
#
# (bench/kernelbench_jobs_sample.txt: every 6th line of bench/kernelbench_sample.txt, so that -j 1
# fits one device call.)
#
# Output ($OUT, else ./gpu-jobs-out): compare.txt (per op: both verdicts, both generate times,
# both winners; then the count of differences), j12.tgz and j1.tgz (each run's gpu_suite.sh
# files). EGG_JOBS_DEADLINE (default 560 s) is split: -j 12 runs first with a third of it, -j 1
# gets the rest; only ops finished in both runs are compared, and the others are named.
set -u -o pipefail
START=$SECONDS
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_ROOT="${OUT:-$ROOT/gpu-jobs-out}"
mkdir -p "$OUT_ROOT"
DEADLINE="${EGG_JOBS_DEADLINE:-560}"
PY="${EGG_PYTHON:-$(command -v python3)}"
for J in 12 1; do
  LEFT=$(( DEADLINE - (SECONDS - START) ))
  [ "$J" = 12 ] && LEFT=$(( DEADLINE / 3 ))
  mkdir -p "$OUT_ROOT/j$J"
  OUT="$OUT_ROOT/j$J" EGG_BENCH_JOBS=$J EGG_SUITE_DEADLINE=$LEFT bash "$ROOT/tools/gpu_suite.sh" "$@" |
    tail -3 | sed "s/^/j$J: /"
done
"$PY" - "$OUT_ROOT/j12/rows.jsonl" "$OUT_ROOT/j1/rows.jsonl" <<'PYEOF' | tee "$OUT_ROOT/compare.txt"
import json, sys

def rows(path):
    try:
        return {r["op"]: r for r in (json.loads(l) for l in open(path) if l.strip())}
    except OSError:
        return {}

def verdict(r):
    return "verified" if r["verified"] else "NOT: " + " ".join(str(r.get("status", "")).split()[:6])

many, one = rows(sys.argv[1]), rows(sys.argv[2])
both = sorted(set(many) & set(one))
diff = 0
print("%-40s %-10s %-10s %7s %7s  %s" % ("op", "-j 12", "-j 1", "gen12 s", "gen1 s", "winners (-j 12 / -j 1)"))
for op in both:
    a, b = many[op], one[op]
    same = verdict(a) == verdict(b)
    diff += not same
    print("%-40s %-10s %-10s %7.0f %7.0f  %s / %s%s" % (
        op, verdict(a)[:10], verdict(b)[:10], a.get("generate_s") or 0, b.get("generate_s") or 0,
        a.get("candidate", "-"), b.get("candidate", "-"), "" if same else "   DIFFERENT: %s | %s"
        % (verdict(a), verdict(b))))
print("compared %d ops: %d verdicts differ" % (len(both), diff))
for name, only in (("-j 12", set(many) - set(one)), ("-j 1", set(one) - set(many))):
    if only:
        print("finished only at %s: %s" % (name, " ".join(sorted(only))))
PYEOF
for J in 12 1; do (cd "$OUT_ROOT" && tar -czf "j$J.tgz" "j$J" && rm -rf "j$J"); done
echo "gpu_jobs_compare: done after $((SECONDS - START)) s"
