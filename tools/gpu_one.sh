#!/usr/bin/env bash
# Diagnose ops on the GPU machine: builds egg-gen and egg-harness only, then runs
# `egg-gen generate` on each op (all at once) with budget 1, no baselines and the full error report.
#
#   bash tools/gpu_one.sh examples/suite/red_cumsum.py [...]
#
# EGG_ONE_AS_BUILD=1 runs them as an egg_kernel() build does instead (default budget, eager
# baseline, debug log), each cut at EGG_ONE_TIMEOUT seconds (default 240), with the processes
# sampled every 5 s: where a slow generation spends its time.
# Output ($OUT, else ./gpu-one-out): <op>.log (egg-gen's whole stderr, each line stamped with the
# seconds since the start), build.log, ps.log (the samples), manifests.tgz.
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
FLAGS=(--budget 1 --no-baseline)
[ -n "${EGG_ONE_AS_BUILD:-}" ] && FLAGS=() && export EGG_LOG=debug
START=$SECONDS
stamp() { while IFS= read -r line; do printf '%4d %s\n' $((SECONDS - START)) "$line"; done; }
( while :; do echo "== $((SECONDS - START)) s"; ps -eo pid,ppid,etimes,pcpu,rss,args --sort=pid |
    grep -E "egg|python|nvcc|cicc|ptxas|sanitizer" | grep -v grep | cut -c1-300; sleep 5; done ) >"$OUT/ps.log" 2>&1 &
SAMPLER=$!
PIDS=()
for op in "$@"; do
  name="$(basename "$op" .py)"
  EGG_CACHE=off timeout "${EGG_ONE_TIMEOUT:-240}" "$B/generator/egg-gen" generate "$op" --arch "$ARCH" \
    --out "$ROOT/build-one/$name" --python "$PY" --nvcc "$(command -v nvcc)" "${FLAGS[@]}" 2>&1 |
    stamp >"$OUT/$name.log" &
  PIDS+=($!)
done
wait "${PIDS[@]}"
kill "$SAMPLER" 2>/dev/null
(cd "$ROOT" && find build-one -name manifest.json | tar -czf "$OUT/manifests.tgz" -T -) 2>/dev/null
for op in "$@"; do n="$(basename "$op" .py)"; echo "== $n"; grep -v "egg: bench" "$OUT/$n.log" | cut -c1-600 | tail -40; done
