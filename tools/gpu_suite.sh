#!/usr/bin/env bash
# Quick GPU pass over some op.py files: builds only egg-gen and egg-harness, then runs
# `egg-gen bench` on each op separately so every finished op's row survives a time limit.
#
#   bash tools/gpu_suite.sh examples/suite/ew_relu.py examples/suite/red_softmax.py ...
#
# Output ($OUT, else ./gpu-suite-out): suite.txt (tables), suite.jsonl (one report per op), build.log.
# EGG_BENCH_BUDGET (default 2) candidates per stage; EGG_BENCH_FLAGS extra bench flags.
set -u -o pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$ROOT/gpu-suite-out}"
mkdir -p "$OUT"
PY="${EGG_PYTHON:-$(command -v python3)}"
TORCH_PREFIX="$("$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
B="$ROOT/build-gpu"
{ cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEGG_PYTHON="$PY" -DEGG_BUILD_TESTS=OFF \
        -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" && cmake --build "$B" -j "$(nproc)" --target egg-gen egg-harness; } \
  >"$OUT/build.log" 2>&1 || { echo "build failed"; tail -30 "$OUT/build.log"; exit 1; }
ARCH="sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)"
echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) date: $(date -u +%FT%TZ)" | tee "$OUT/suite.txt"
for op in "$@"; do
  name="$(basename "$op" .py)"
  start=$(date +%s)
  EGG_CACHE=off "$B/generator/egg-gen" bench "$op" --arch "$ARCH" --out "$ROOT/build-suite/$name" --python "$PY" \
    --nvcc "$(command -v nvcc)" --budget "${EGG_BENCH_BUDGET:-2}" ${EGG_BENCH_FLAGS:-} >>"$OUT/suite.txt" 2>>"$OUT/suite.log"
  echo "($name: $(( $(date +%s) - start )) s)" >>"$OUT/suite.txt"
  cat "$ROOT/build-suite/$name/bench.json" | tr -d '\n' >>"$OUT/suite.jsonl" 2>/dev/null; echo >>"$OUT/suite.jsonl"
done
cat "$OUT/suite.txt"
