#!/usr/bin/env bash
# The GPU machine's microbenchmark call in one line: each named microbenchmark (bench/micro/NAME.cu)
# compiled and run, then its PyTorch side (NAME_torch.py) where there is one, all output appended
# to $OUT/micro.txt as it comes (a call cut short keeps what finished); Inductor's sources, where a
# torch side saves them, go to $OUT/inductor.tgz.
#
#   bash bench/micro/run_all.sh conv_igemm transpose_pass
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${OUT:-$ROOT/micro-out}"
mkdir -p "$OUT"
LOG="$OUT/micro.txt"
export PATH="$PATH:/usr/local/cuda/bin" TORCHINDUCTOR_CACHE_DIR="${TORCHINDUCTOR_CACHE_DIR:-/tmp/egg-micro-ic}"
for name in "$@"; do
  echo "== $name ($(date -u +%H:%M:%SZ))" >>"$LOG"
  if nvcc -O3 -arch=sm_90 -std=c++17 "$ROOT/bench/micro/$name.cu" -lcublasLt -lcublas -o "/tmp/egg-micro-$name" >>"$LOG" 2>&1; then
    timeout 240 "/tmp/egg-micro-$name" >>"$LOG" 2>&1 || echo "$name: exit $?" >>"$LOG"
  else
    echo "$name: nvcc failed" >>"$LOG"
  fi
  if [ -f "$ROOT/bench/micro/${name}_torch.py" ]; then
    timeout 240 python3 "$ROOT/bench/micro/${name}_torch.py" "/tmp/egg-micro-src/$name" >>"$LOG" 2>&1 ||
      echo "${name}_torch: exit $?" >>"$LOG"
  fi
done
[ -d /tmp/egg-micro-src ] && tar czf "$OUT/inductor.tgz" -C /tmp egg-micro-src
cat "$LOG"
