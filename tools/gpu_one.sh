#!/usr/bin/env bash
# Diagnose ops on the GPU machine: builds egg-gen and egg-harness only, then runs
# `egg-gen generate` on each op with budget 1, no baselines and the full error report.
#
#   bash tools/gpu_one.sh examples/suite/red_cumsum.py [...]
#
# Output ($OUT, else ./gpu-one-out): <op>.log (egg-gen's whole stderr), build.log.
set -u -o pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$ROOT/gpu-one-out}"
mkdir -p "$OUT"
PY="${EGG_PYTHON:-$(command -v python3)}"
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1 EGG_NCU=off
B="$ROOT/build-gpu"
{ cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEGG_PYTHON="$PY" -DEGG_BUILD_TESTS=OFF \
    -DCMAKE_PREFIX_PATH="$("$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)')" &&
  cmake --build "$B" -j "$(nproc)" --target egg-gen egg-harness; } >"$OUT/build.log" 2>&1 ||
  { echo "build failed"; tail -30 "$OUT/build.log"; exit 1; }
ARCH="sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)"
for op in "$@"; do
  name="$(basename "$op" .py)"
  EGG_CACHE=off "$B/generator/egg-gen" generate "$op" --arch "$ARCH" --out "$ROOT/build-one/$name" \
    --python "$PY" --nvcc "$(command -v nvcc)" --budget 1 --no-baseline >"$OUT/$name.log" 2>&1 &
done
wait
for op in "$@"; do n="$(basename "$op" .py)"; echo "== $n"; grep -v "^egg: bench" "$OUT/$n.log" | cut -c1-600 | head -40; done
