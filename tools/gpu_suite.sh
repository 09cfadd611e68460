#!/usr/bin/env bash
# The suite benchmark on the GPU machine in one call: builds only egg-gen and egg-harness, then
# runs `egg-gen bench` over the given op.py files or folders with several ops in flight (timed
# spans take turns on the GPU lock, base/gpu_lock.h), writing each op's row as soon as it is
# done so a run cut short by a time limit keeps what it finished.
#
#   bash tools/gpu_suite.sh examples/suite                 # everything
#   bash tools/gpu_suite.sh examples/suite/gemm_*.py       # one family
#   bash tools/gpu_suite.sh --list bench/kernelbench_sample.txt kb   # the ops a list names, under kb/
#
# Output ($OUT, else ./gpu-suite-out): rows.jsonl (one row per finished op), bench.json/bench.md
# (the full report, when the run finished), suite.txt (tables), suite.log, logs.tgz (build.log and,
# manifests.tgz (every finished op's manifest.json: `python3 tools/attempts.py manifests.tgz`
# lists each candidate measured), peaks.json (peak disk, host and GPU memory per op,
# tools/resource_monitor.py); with EGG_SUITE_CTEST=1 logs.tgz also holds ctest-gpu.log (the harness's
# gpu tests, run first). Eight files: as many as the device tool brings back.
# Environment: EGG_BENCH_JOBS (default: cores - 4, at least 1), EGG_BENCH_BUDGET (candidates per
# stage, default 2; 8 measures the library floors' top 8 cuBLASLt algos / cuDNN ranks between the
# two stages), EGG_BENCH_FLAGS (extra bench flags, e.g. --no-strict, or --no-max-autotune to time
# torch.compile's default mode only: max-autotune-no-cudagraphs autotunes for minutes per GEMM or
# convolution), EGG_SUITE_DEADLINE
# (seconds from the start after which the bench is stopped, default 570), EGG_SUITE_DIR (the
# generations' folder under the repository root, default build-suite: two runs at once each need
# their own), EGG_SUITE_ARCH (the
# arch to generate for, default the GPU's own, e.g. sm_90; sm_90a lets kernels use wgmma), EGG_NCU (default off:
# no Nsight Compute counters for the winners), EGG_REF_DEVICE (where PyTorch computes the
# references: cuda by default, cpu for accuracy audits, docs/gpu.md), EGG_CUDNN_ROOT (cuDNN's root; default: the CUDA toolkit's, else PyTorch's nvidia.cudnn; none: off).
set -u -o pipefail
START=$SECONDS
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "${1:-}" = --list ]; then  # ops named in a file, relative to a folder
  LIST="$2" BASE="$3"
  shift 3
  set -- $(sed "s|^|$BASE/|" "$LIST") "$@"
fi
OUT="${OUT:-$ROOT/gpu-suite-out}"
mkdir -p "$OUT"
PY="${EGG_PYTHON:-$(command -v python3)}"
TORCH_PREFIX="$("$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
export PATH="$PATH:/usr/local/cuda/bin" PYTHONUNBUFFERED=1
# cuDNN for the conv family's cuDNN structure: the CUDA toolkit's (egg-gen finds it itself), else
# the one PyTorch's wheel ships.
if [ -z "${EGG_CUDNN_ROOT:-}" ] && [ ! -f /usr/local/cuda/include/cudnn.h ]; then
  D="$("$PY" -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null || true)"
  [ -n "$D" ] && [ -f "$D/include/cudnn.h" ] && export EGG_CUDNN_ROOT="$D"
fi
B="$ROOT/build-gpu"
TESTS=OFF TARGETS="egg-gen egg-harness"
[ -n "${EGG_SUITE_CTEST:-}" ] && TESTS=ON TARGETS="$TARGETS egg_harness_gpu_test"
{ cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEGG_PYTHON="$PY" -DEGG_BUILD_TESTS=$TESTS \
        -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" && cmake --build "$B" -j "$(nproc)" --target $TARGETS; } \
  >"$OUT/build.log" 2>&1 || { echo "build failed"; tail -30 "$OUT/build.log"; exit 1; }
echo "build: $((SECONDS - START)) s"
if [ -n "${EGG_SUITE_CTEST:-}" ]; then  # the harness's gpu tests: planted candidates, a 6 GiB op
  ctest --test-dir "$B" -L gpu -R '^harness[.]gpu[.]' -j 4 --output-on-failure >"$OUT/ctest-gpu.log" 2>&1
  echo "ctest harness.gpu: rc $? after $((SECONDS - START)) s; $(grep -E 'tests passed|tests failed' "$OUT/ctest-gpu.log")"
fi
ARCH="${EGG_SUITE_ARCH:-sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)}"
JOBS="${EGG_BENCH_JOBS:-$(( $(nproc) > 5 ? $(nproc) - 4 : 1 ))}"
LEFT=$(( ${EGG_SUITE_DEADLINE:-570} - (SECONDS - START) ))
echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) date: $(date -u +%FT%TZ) jobs: $JOBS budget: ${EGG_BENCH_BUDGET:-2} time left: $LEFT s cudnn: ${EGG_CUDNN_ROOT:-toolkit}" | tee "$OUT/suite.txt"
: >"$OUT/rows.jsonl"
SUITE="${EGG_SUITE_DIR:-build-suite}"  # the generations' folder, under the repository root
case "$SUITE" in
  .* | */*) echo "EGG_SUITE_DIR=$SUITE: give one folder name under the repository root (e.g. build-suite-2)"; exit 2 ;;
esac
rm -rf "${ROOT:?}/$SUITE"
EGG_NCU="${EGG_NCU:-off}" EGG_CACHE=off timeout --signal=TERM "$LEFT" \
  "$PY" "$ROOT/tools/resource_monitor.py" --out "$OUT/peaks.json" -- "$B/generator/egg-gen" bench "$@" --arch "$ARCH" \
  --out "$ROOT/$SUITE" --python "$PY" --nvcc "$(command -v nvcc)" -j "$JOBS" \
  --budget "${EGG_BENCH_BUDGET:-2}" --rows "$OUT/rows.jsonl" --json "$OUT/bench.json" \
  --markdown "$OUT/bench.md" ${EGG_BENCH_FLAGS:-} >>"$OUT/suite.txt" 2>"$OUT/suite.log"
echo "bench rc $? after $((SECONDS - START)) s" | tee -a "$OUT/suite.txt"
# Every finished op's manifest (its candidates, their timings and the winner), in one file.
(cd "$ROOT" && find "$SUITE" -name manifest.json 2>/dev/null | tar -czf "$OUT/manifests.tgz" -T -) ||
  echo "manifests.tgz: not written"
# The rows that finished, whether or not the whole run did.
"$PY" - "$OUT/rows.jsonl" <<'PYEOF' | tee -a "$OUT/suite.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
f = lambda v, s="%.4f": "-" if not isinstance(v, (int, float)) else s % v
for r in sorted(rows, key=lambda r: r["op"]):
    print("%-36s %-4s %9s %9s %9s %9s %6s %6s %6s %6s %5ss %s %s" % (r["op"], "ok" if r["verified"] else "NO",
          f(r["kernel_ms"]), f(r["eager_ms"]), f(r["compile_ms"]), f(r.get("compile_max_autotune_ms")),
          f(r["speedup_vs_eager"], "%.2f"), f(r["speedup_vs_compile"], "%.2f"),
          f(r.get("speedup_vs_compile_max_autotune"), "%.2f"), f(r.get("achieved_gbps"), "%.0f"),
          f(r["generate_s"], "%.0f"), "SLOWER-THAN-EAGER" if r.get("vs_eager") == "slower" else "",
          "" if r["verified"] else r["status"][:300]))
print("rows %d, verified %d" % (len(rows), sum(r["verified"] for r in rows)))
PYEOF
# The build's and the harness tests' logs in one file (the device tool brings back 8).
(cd "$OUT" && tar -czf logs.tgz build.log $([ -f ctest-gpu.log ] && echo ctest-gpu.log) && rm -f build.log ctest-gpu.log) ||
  echo "logs.tgz: not written"
