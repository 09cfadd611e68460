#!/usr/bin/env bash
# Issue 11's parallel-build check on the GPU machine: the same ops through `egg-gen bench` at -j 12
# and at -j 1 (tools/gpu_suite.sh, same build), then their verdicts side by side
# (tools/jobs_compare.py). One device call runs one jobs count, as -j 1 over a sample takes most
# of a call by itself:
#
#   EGG_JOBS=12 bash tools/gpu_jobs_compare.sh --list bench/kernelbench_jobs_sample.txt kb
#   EGG_JOBS=1  bash tools/gpu_jobs_compare.sh --list bench/kernelbench_jobs_sample.txt kb
#   python3 tools/jobs_compare.py j12-rows.jsonl j1-rows.jsonl     # here, on what came back
#   EGG_JOBS=16 bash tools/gpu_jobs_compare.sh --list bench/kernelbench_jobs16_sample.txt kb  # 16 at once
#
# EGG_JOBS="12 1" runs both in one call, splitting EGG_JOBS_DEADLINE (default 560 s): a third to
# -j 12, the rest to -j 1. The -j 1 run skips the baselines (--no-baseline: verdicts only, and
# nothing else loads the machine); the -j 12 run times them, as a build with baselines does.
# Output ($OUT, else ./gpu-jobs-out): j<J>-rows.jsonl and j<J>.tgz (that run's gpu_suite.sh
# files) per jobs count; compare.txt when a -j 1 run and another ran in this call.
# bench/kernelbench_jobs16_sample.txt (every 3rd line of bench/kernelbench_sample.txt, 16 ops) is
# the sample for -j 16.
set -u -o pipefail
START=$SECONDS
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_ROOT="${OUT:-$ROOT/gpu-jobs-out}"
mkdir -p "$OUT_ROOT"
DEADLINE="${EGG_JOBS_DEADLINE:-560}"
PY="${EGG_PYTHON:-$(command -v python3)}"
COUNTS="${EGG_JOBS:-12 1}"
for J in $COUNTS; do
  LEFT=$(( DEADLINE - (SECONDS - START) ))
  [ "$COUNTS" != "$J" ] && [ "$J" != 1 ] && LEFT=$(( DEADLINE / 3 ))
  FLAGS="${EGG_BENCH_FLAGS:---no-max-autotune}"
  [ "$J" = 1 ] && FLAGS="$FLAGS --no-baseline"
  mkdir -p "$OUT_ROOT/j$J"
  OUT="$OUT_ROOT/j$J" EGG_BENCH_JOBS=$J EGG_SUITE_DEADLINE=$LEFT EGG_BENCH_FLAGS="$FLAGS" \
    bash "$ROOT/tools/gpu_suite.sh" "$@" | tail -3 | sed "s/^/j$J: /"
  cp "$OUT_ROOT/j$J/rows.jsonl" "$OUT_ROOT/j$J-rows.jsonl"
  (cd "$OUT_ROOT" && tar -czf "j$J.tgz" "j$J" && rm -rf "j$J")
done
for J in $COUNTS; do  # every many-jobs run of this call against its -j 1 run
  if [ "$J" != 1 ] && [ -f "$OUT_ROOT/j$J-rows.jsonl" ] && [ -f "$OUT_ROOT/j1-rows.jsonl" ]; then
    "$PY" "$ROOT/tools/jobs_compare.py" "$OUT_ROOT/j$J-rows.jsonl" "$OUT_ROOT/j1-rows.jsonl" \
      --labels "-j $J" "-j 1" | tee -a "$OUT_ROOT/compare.txt"
  fi
done
echo "gpu_jobs_compare: done after $((SECONDS - START)) s"
