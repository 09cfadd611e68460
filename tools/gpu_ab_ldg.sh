#!/usr/bin/env bash
# The eighteenth session's A/B on the GPU machine: the suite over bench/eighteenth-b.txt as the
# tree has it (A), then level2/91 again with egg_ldg (templates/elementwise/ops.cuh) reading
# through a plain load instead of the read-only path (B), in its own generation folder, keeping
# B's rows and manifests under $OUT/b. Diagnostic; docs/PERFORMANCE.md cites its figures.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
EGG_SUITE_DEADLINE="${A_DEADLINE:-300}" EGG_BENCH_BUDGET=2 EGG_BENCH_FLAGS=--no-max-autotune \
  bash tools/gpu_suite.sh --list bench/eighteenth-b.txt kb 2>&1 | tail -14
rm -f "$OUT/bench.md" "$OUT/bench.json"
sed -i 's|return egg_to_float(__ldg(p));|return egg_to_float(*p);|' templates/elementwise/ops.cuh
grep -q 'return egg_to_float(\*p);' templates/elementwise/ops.cuh || { echo "B: ops.cuh not patched"; exit 1; }
mkdir -p "$OUT/b"
OUT="$OUT/b" EGG_SUITE_DIR=build-suite-b EGG_SUITE_DEADLINE="${B_DEADLINE:-170}" EGG_BENCH_BUDGET=2 \
  EGG_BENCH_FLAGS=--no-max-autotune bash tools/gpu_suite.sh --list bench/eighteenth-b-ldg.txt kb 2>&1 | tail -3
(cd "$OUT/b" && rm -f bench.md bench.json suite.log logs.tgz peaks.json)
