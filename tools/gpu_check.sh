#!/usr/bin/env bash
# One command on the GPU machine checks everything that needs a GPU (docs/gpu.md):
#
#   bash tools/gpu_check.sh [bench]
#
# From a fresh copy of the repository: configures and builds EGG (Ninja, Release), runs
# `ctest -L gpu -LE suite` (the suite has tools/gpu_suite.sh), builds and tests examples/quickstart if present, and with `bench` also measures
# egg-harness on a KernelBench-sized element-wise op (kernel vs copy bandwidth, eager, torch.compile,
# the harness's own overhead). Logs go to $OUT (the device tool's folder), else ./gpu-check-out.
# If the whole of EGG does not configure or build, the harness and its tests are built alone, so
# the GPU checks still run; the summary says so.
set -u -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$ROOT/gpu-check-out}"
mkdir -p "$OUT"
BUILD="$ROOT/build-gpu"
JOBS="$(nproc 2>/dev/null || echo 4)"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
say() { echo "gpu_check: $*" | tee -a "$SUMMARY"; }
export PYTHONUNBUFFERED=1

PY="${EGG_PYTHON:-$(command -v python3)}"
TORCH_PREFIX="$("$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)"
say "date: $(date -u +%Y-%m-%dT%H:%MZ)"
say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'nvidia-smi failed')"
say "nvcc: $(nvcc --version 2>/dev/null | tail -1) python: $PY torch: $("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null) cmake path: $TORCH_PREFIX"
export PATH="$PATH:/usr/local/cuda/bin"

# --- 1. configure + build -------------------------------------------------------------------
MODE=full
{
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEGG_PYTHON="$PY" \
        -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" &&
  cmake --build "$BUILD" -j "$JOBS"
} >"$OUT/build.log" 2>&1 || MODE=harness-only
if [ "$MODE" = harness-only ]; then
  say "full EGG build FAILED (see build.log); building harness/ and tests/harness/ alone"
  BUILD="$ROOT/build-gpu-harness"
  TOP="$ROOT/build-gpu-harness-top"
  mkdir -p "$TOP"
  cat >"$TOP/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(EGGHarnessOnly LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
include(GNUInstallDirs)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(Threads REQUIRED)
find_package(Boost CONFIG REQUIRED)
add_library(egg_boost_process INTERFACE)
target_link_libraries(egg_boost_process INTERFACE Boost::headers)
if(Boost_VERSION VERSION_LESS 1.80)
  find_package(Boost CONFIG REQUIRED COMPONENTS filesystem)
  target_link_libraries(egg_boost_process INTERFACE Boost::filesystem)
else()
  target_compile_definitions(egg_boost_process INTERFACE BOOST_PROCESS_USE_STD_FS)
endif()
add_library(egg_warnings INTERFACE)
target_compile_options(egg_warnings INTERFACE -Wall -Wextra -Werror)
set(EGG_BUILD_HARNESS ON)
set(EGG_PYTHON_EXECUTABLE "$PY")
add_subdirectory("$ROOT/harness" harness)
enable_testing()
add_subdirectory("$ROOT/tests/harness" tests_harness)
CM
  {
    cmake -S "$TOP" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" &&
    cmake --build "$BUILD" -j "$JOBS"
  } >>"$OUT/build.log" 2>&1 || { say "harness-only build FAILED too"; tail -40 "$OUT/build.log"; exit 1; }
fi
say "build ($MODE): ok"

# --- 2. the gpu tests ------------------------------------------------------------------------
( cd "$BUILD" && ctest -L gpu -LE suite --output-on-failure -j 4 ) >"$OUT/ctest-gpu.log" 2>&1
CTEST_RC=$?
say "ctest -L gpu: $(grep -E 'tests passed|tests failed' "$OUT/ctest-gpu.log" | tail -1) (rc $CTEST_RC)"
grep -E '^ *[0-9]+/[0-9]+ Test' "$OUT/ctest-gpu.log" | sed 's/^/  /' | tee -a "$SUMMARY"

# --- 3. the quickstart ------------------------------------------------------------------------
QS="$ROOT/examples/quickstart"
if [ -f "$QS/CMakeLists.txt" ] && [ "$MODE" = full ]; then
  {
    cmake -S "$QS" -B "$ROOT/build-quickstart" -G Ninja -DCMAKE_BUILD_TYPE=Release \
          -DCMAKE_PREFIX_PATH="$BUILD;$TORCH_PREFIX" -DEGG_PYTHON="$PY" &&
    cmake --build "$ROOT/build-quickstart" -j "$JOBS" &&
    "$ROOT/build-quickstart/quickstart" &&
    cat "$ROOT/build-quickstart/egg/gelu_bias/manifest.json"
  } >"$OUT/quickstart.log" 2>&1 && say "quickstart: ok" || say "quickstart: FAILED (see quickstart.log)"
else
  say "quickstart: not run ($( [ -f "$QS/CMakeLists.txt" ] && echo 'EGG did not build' || echo 'examples/quickstart absent'))"
fi

# --- 4. benchmark (optional) ------------------------------------------------------------------
if [ "${1:-}" = bench ]; then
  B="$ROOT/build-bench"
  mkdir -p "$B"
  H="$BUILD/harness/egg-harness"
  CC="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d . )"
  {
    set -x
    "$PY" "$ROOT/tests/harness/make_spec.py" --op "$ROOT/tests/harness/data/scale_add_large_op.py" --out "$B/refs"
    # The reference server (what egg-gen starts per op); it ends when its stdin closes.
    rm -f "$B/ready.json"
    sleep 900 | PYTHONPATH="$ROOT/python" "$PY" -m egg_frontend serve --op "$ROOT/tests/harness/data/scale_add_large_op.py" \
        --spec "$B/refs/spec.json" --socket "$B/refs.sock" --ready "$B/ready.json" &
    SERVER=$!
    for _ in $(seq 600); do [ -f "$B/ready.json" ] && break; sleep 0.2; done
    cat "$B/ready.json"
    nvcc -shared -Xcompiler -fPIC -DEGG_CANDIDATE_ENTRY -O3 -arch=sm_$CC -DEGG_ROWS=8192 -DEGG_COLS=8192 \
         "$ROOT/tests/harness/planted/good.cu" -o "$B/good.so"
    t0=$(date +%s.%N); "$H" verify --lib "$B/good.so" --spec "$B/refs/spec.json" --refs "$B/refs.sock" --work "$B/v0" --out "$B/verify.json"; t1=$(date +%s.%N)
    echo "WALL verify-only $(awk "BEGIN{print $t1 - $t0}")"
    t0=$(date +%s.%N); "$H" verify --lib "$B/good.so" --spec "$B/refs/spec.json" --refs "$B/refs.sock" --work "$B/v1" --out "$B/time.json" --time --source "$ROOT/tests/harness/planted/good.cu"; t1=$(date +%s.%N)
    echo "WALL verify+time $(awk "BEGIN{print $t1 - $t0}")"
    kill "$SERVER" 2>/dev/null
    PYTHONPATH="$ROOT/python" "$PY" -m egg_bench baseline --op "$ROOT/tests/harness/data/scale_add_large_op.py" --out "$B/baseline.json"
    set +x
  } >"$OUT/bench.log" 2>&1
  cp "$B/time.json" "$OUT/bench_harness.json" 2>/dev/null
  cp "$B/baseline.json" "$OUT/bench_baseline.json" 2>/dev/null
  "$PY" - "$B" "$OUT/bench.log" <<'PYEOF' | tee -a "$SUMMARY"
import json, re, sys
b, log = sys.argv[1], open(sys.argv[2]).read()
walls = dict(re.findall(r"WALL (\S+) ([0-9.]+)", log))
try:
    v, t, base = (json.load(open(f"{b}/{n}.json")) for n in ("verify", "time", "baseline"))
except Exception as e:
    print("bench: FAILED:", e); sys.exit(0)
tm = t.get("timing", {})
print(f"bench: op scale_add 8192x8192 fp32 (out = relu(x)*w + y), GPU {t['gpu']['name']}, driver {t['gpu']['driver']}, runtime {t['gpu']['runtime']}")
print(f"bench: status {t['status']}; kernel event median {tm['event_ms']['median']*1e3:.1f} us (p10 {tm['event_ms']['p10']*1e3:.1f}, p90 {tm['event_ms']['p90']*1e3:.1f}), "
      f"CUPTI kernel {tm['cupti_kernel_ms']['median']*1e3:.1f} us, {tm['kernels_per_launch']:.2f} kernels/launch, {tm['trials']} trials")
print(f"bench: achieved {tm['achieved_gbps']:.0f} GB/s vs copy {tm['copy_gbps']:.0f} GB/s = {100*tm['achieved_gbps']/tm['copy_gbps']:.1f}% ({tm['bytes_moved']/1e6:.0f} MB moved)")
e = base["eager"]["median_ms"]; c = base.get("compile", {}).get("median_ms")
k = tm["event_ms"]["median"]
print(f"bench: eager {e*1e3:.1f} us (speedup {e/k:.2f}x)" + (f", torch.compile {c*1e3:.1f} us (speedup {c/k:.2f}x, compile {base['compile']['compile_s']:.1f} s)" if c else f", torch.compile: {base.get('compile')}"))
print(f"bench: harness wall: verify-only {walls.get('verify-only')} s (phases {json.dumps({k: round(x) for k, x in v['phases_ms'].items()})} ms); "
      f"verify+time {walls.get('verify+time')} s (phases {json.dumps({k: round(x) for k, x in t['phases_ms'].items()})} ms)")
PYEOF
fi
# --- suite: egg-gen bench over op.py files or folders (e.g. `suite examples/suite/ew_relu.py ...`) ---
if [ "${1:-}" = suite ] && [ "$MODE" = full ]; then
  shift
  rm -rf "$ROOT/build-suite"
  EGG_CACHE=off "$BUILD/generator/egg-gen" bench "$@" --arch "sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)" \
      --out "$ROOT/build-suite" --python "$PY" --nvcc "$(command -v nvcc)" --budget "${EGG_BENCH_BUDGET:-4}" \
      --copy-gbps "${EGG_COPY_GBPS:-0}" >"$OUT/suite.txt" 2>"$OUT/suite.log"
  say "suite: rc $? ($(tail -1 "$OUT/suite.txt"))"
  cp "$ROOT/build-suite/bench.json" "$ROOT/build-suite/bench.md" "$OUT/" 2>/dev/null
fi

say "done: logs in $OUT"
[ "$CTEST_RC" = 0 ]
