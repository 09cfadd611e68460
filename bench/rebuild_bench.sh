#!/usr/bin/env bash
# Rebuild benchmark: how much egg_kernel() adds to an incremental build.
#
#   bench/rebuild_bench.sh [EGG_BUILD_DIR] [WORK_DIR]
#
# Generates a project with 20 egg_kernel() calls (small element-wise ops), builds it, then times
#   1. a no-op rebuild (`ninja` with nothing to do),
#   2. a rebuild after a comment-only edit of one op.py (egg-gen runs once; no nvcc may run),
#   3. a cache-hit regeneration (a fresh build dir, same cache: all 20 generated from the cache),
# each beside plain Ninja's no-op: `ninja` on a "plain" project built from the very same 20 .cu
# files checked in as ordinary sources (no egg_kernel()), and on the EGG tree itself.
# Timings are wall-clock on whatever machine runs it (no GPU is needed); medians over REPS runs.
#
# Environment: REPS (default 10), EGG_BENCH_ARCH (default sm_90), JOBS (default 2).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
EGG_BUILD="$(cd "${1:-$HERE/../build}" && pwd)"
WORK="${2:-$(mktemp -d /tmp/egg-bench.XXXXXX)}"
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
REPS="${REPS:-10}"
ARCH="${EGG_BENCH_ARCH:-sm_90}"
JOBS="${JOBS:-2}"
N=20
NINJA="$(command -v ninja || command -v ninja-build)"

if [ ! -f "$EGG_BUILD/EGGConfig.cmake" ]; then
  echo "bench: $EGG_BUILD is not a configured EGG build tree (no EGGConfig.cmake)" >&2
  exit 2
fi

log() { echo "bench: $*" >&2; }
now_ns() { date +%s%N; }
# median of the numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# time_ms <cmd...>: runs the command (output discarded), prints wall ms
time_ms() {
  local t0 t1
  t0=$(now_ns)
  "$@" >/dev/null 2>&1
  t1=$(now_ns)
  echo $(((t1 - t0) / 1000000))
}
# noop_ms <build dir>: median no-op ninja time, after checking there is nothing to do
noop_ms() {
  local out
  out="$("$NINJA" -C "$1" 2>&1)"
  if ! grep -q "ninja: no work to do." <<<"$out"; then
    log "expected a no-op build in $1, got:"
    echo "$out" >&2
    exit 1
  fi
  for _ in $(seq "$REPS"); do time_ms "$NINJA" -C "$1"; done | median
}

# ---- the project: 20 element-wise ops ------------------------------------------------------------
SRC="$WORK/src"
rm -rf "$SRC" "$WORK/build" "$WORK/build-fresh" "$WORK/plain" "$WORK/cache"
mkdir -p "$SRC/ops"
bodies=(
  'torch.relu(x * C + 0.5)'
  'torch.sigmoid(x) * C'
  'F.gelu(x + C, approximate="tanh")'
  'torch.clamp(F.silu(x), min=-C, max=C + 1.0)'
  'torch.tanh(x * C) + x'
  'F.leaky_relu(x - C, negative_slope=0.1)'
  'F.hardswish(x * C)'
  'F.softplus(x) - C'
  'F.elu(x * C)'
  'torch.abs(x) * C + 1.0'
)
for i in $(seq 0 $((N - 1))); do
  name=$(printf "op_%02d" "$i")
  body="${bodies[$((i % ${#bodies[@]}))]}"
  c="0.$((i + 11))"
  cat >"$SRC/ops/$name.py" <<EOF
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return ${body//C/$c}


def get_inputs():
    return [torch.randn(1024, 1024)]


def get_init_inputs():
    return []
EOF
done
{
  echo "cmake_minimum_required(VERSION 3.25)"
  echo "project(egg_rebuild_bench LANGUAGES CXX CUDA)"
  echo "find_package(EGG REQUIRED)"
  echo "add_executable(bench main.cpp)"
  for i in $(seq 0 $((N - 1))); do printf "egg_kernel(bench ops/op_%02d.py ARCH %s)\n" "$i" "$ARCH"; done
} >"$SRC/CMakeLists.txt"
echo "int main() { return 0; }" >"$SRC/main.cpp"

CFG=(-G Ninja -DCMAKE_BUILD_TYPE=Release "-DEGG_DIR=$EGG_BUILD" "-DEGG_CACHE_DIR=$WORK/cache")
gen_targets() { for i in $(seq 0 $((N - 1))); do printf "egg/op_%02d/op_%02d.cu " "$i" "$i"; done; }

log "configuring $WORK/build"
cmake -S "$SRC" -B "$WORK/build" "${CFG[@]}" >"$WORK/configure.log" 2>&1 ||
  { cat "$WORK/configure.log" >&2; exit 1; }
log "cold generation of $N kernels (empty cache)"
# shellcheck disable=SC2046
cold_gen=$(time_ms "$NINJA" -C "$WORK/build" -j "$JOBS" $(gen_targets))
log "full build (nvcc)"
t0=$(now_ns)
"$NINJA" -C "$WORK/build" -j "$JOBS" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log" >&2; exit 1; }
full_build=$((($(now_ns) - t0) / 1000000))

# ---- the plain project: the same generated .cu files as ordinary sources -------------------------
PLAIN="$WORK/plain"
mkdir -p "$PLAIN/src"
{
  echo "cmake_minimum_required(VERSION 3.25)"
  echo "project(plain_bench LANGUAGES CXX CUDA)"
  echo "add_executable(bench main.cpp)"
  echo "set_property(TARGET bench PROPERTY CUDA_ARCHITECTURES ${ARCH#sm_})"
  for i in $(seq 0 $((N - 1))); do
    name=$(printf "op_%02d" "$i")
    mkdir -p "$PLAIN/src/$name"
    cp -r "$WORK/build/egg/$name/$name.cu" "$WORK/build/egg/$name/include" "$PLAIN/src/$name/"
    echo "target_sources(bench PRIVATE $name/$name.cu)"
    echo "target_include_directories(bench PRIVATE $name/include)"
  done
} >"$PLAIN/src/CMakeLists.txt"
cp "$SRC/main.cpp" "$PLAIN/src/"
log "building the plain project"
cmake -S "$PLAIN/src" -B "$PLAIN/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null 2>&1
"$NINJA" -C "$PLAIN/build" -j "$JOBS" >/dev/null 2>&1

# ---- 1. no-op --------------------------------------------------------------------------------------
log "no-op rebuilds"
egg_noop=$(noop_ms "$WORK/build")
plain_noop=$(noop_ms "$PLAIN/build")

# ---- 2. comment-only edit of one op.py -------------------------------------------------------------
log "comment-only edits"
edit_times=()
for r in $(seq "$REPS"); do
  echo "# comment $r" >>"$SRC/ops/op_07.py"
  t0=$(now_ns)
  out="$("$NINJA" -C "$WORK/build" -v 2>&1)"
  edit_times+=($((($(now_ns) - t0) / 1000000)))
  nvcc_runs=$(grep -c -E 'nvcc.* -c |\.cu\.o|\.cpp\.o' <<<"$out" || true)
  if [ "$nvcc_runs" -ne 0 ]; then
    log "FAIL: a comment-only edit compiled or linked something:"
    echo "$out" >&2
    exit 1
  fi
  if ! grep -q "egg-gen.* generate .*op_07.py" <<<"$out"; then
    log "FAIL: the comment edit did not re-run the generator:"
    echo "$out" >&2
    exit 1
  fi
done
edit_ms=$(printf "%s\n" "${edit_times[@]}" | median)
after_edit_noop=$(noop_ms "$WORK/build")

# ---- 3. cache-hit regeneration (fresh build dir, same cache) -----------------------------------
log "cache-hit regeneration in a fresh build dir"
cmake -S "$SRC" -B "$WORK/build-fresh" "${CFG[@]}" >/dev/null 2>&1
# shellcheck disable=SC2046
hit_gen=$(time_ms "$NINJA" -C "$WORK/build-fresh" -j "$JOBS" $(gen_targets))
for i in $(seq 0 $((N - 1))); do
  name=$(printf "op_%02d" "$i")
  cmp -s "$WORK/build/egg/$name/$name.cu" "$WORK/build-fresh/egg/$name/$name.cu" ||
    { log "FAIL: $name.cu differs between the cold and the cache-hit generation"; exit 1; }
done

# ---- report ----------------------------------------------------------------------------------------
cpu="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($(nproc) cores)"
cat <<EOF

EGG rebuild benchmark: $N egg_kernel() calls, ARCH $ARCH, $(date -u +%Y-%m-%d), $cpu
EGG build tree: $EGG_BUILD; work dir: $WORK; medians of $REPS runs; wall-clock ms; -j$JOBS

| scenario                                   | EGG tree (ms) | plain Ninja no-op (ms) | nvcc runs |
|--------------------------------------------|--------------:|-----------------------:|----------:|
| no-op rebuild                              | $(printf %13s "$egg_noop") | $(printf %22s "$plain_noop") | $(printf %9s 0) |
| comment-only edit of one op.py             | $(printf %13s "$edit_ms") | $(printf %22s "$after_edit_noop") | $(printf %9s 0) |
| cache-hit regeneration of $N (fresh dir)   | $(printf %13s "$hit_gen") | $(printf %22s "$plain_noop") | $(printf %9s 0) |
| cold generation of $N (empty cache)        | $(printf %13s "$cold_gen") | $(printf %22s "$plain_noop") | $(printf %9s 0) |
| full first build (generation done, nvcc)   | $(printf %13s "$full_build") | $(printf %22s "-") | $(printf %9s "$N") |

"plain Ninja no-op": row 1 and 3-4: ninja on a plain project compiling the same $N .cu files as
ordinary sources; row 2: ninja's no-op on the EGG tree right after the edit.
EOF
