#!/usr/bin/env bash
# Dumped candidates against PyTorch on the GPU machine in one call (bench/micro/candidates_torch.py
# per op and dump folder), then Nsight Compute's stall and occupancy sections for one candidate
# beside PyTorch's own kernel. Output goes to $OUT/micro.txt and $OUT/ncu.txt as it comes.
#
# On the CPU machine, first dump the candidates of each op (a folder per op, carried along):
#   PYTHONPATH=python $EGG_PYTHON -m egg_frontend trace --op examples/suite/OP.py --out specs/OP
#   EGG_FAMILY_SPEC_DIR=specs EGG_FAMILY_OUT_DIR=build-dumps/new \
#       build/tests/unit/egg_unit_tests --gtest_filter=Families.DumpEveryCandidateForNvcc
# then, with `carry: ["build-dumps"]`:
#   bash bench/micro/candidates_ab.sh "0,2,4" build-dumps/new/attention examples/suite/OP.py ...
#   EGG_AB_NCU=OP:0 bash bench/micro/candidates_ab.sh ...   # also ncu on candidate 0 of OP
# EGG_AB_SO_DIR: where the libraries are (and go): compiled on the CPU machine beforehand
# (candidates_torch.build) and carried along, the GPU call spends no time in nvcc.
set -u
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${OUT:-$ROOT/micro-out}"
mkdir -p "$OUT"
export PATH="$PATH:/usr/local/cuda/bin"
ONLY="$1" DUMPS="$2"
shift 2
SO_DIR="${EGG_AB_SO_DIR:-/tmp}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$OUT/micro.txt" 2>&1
for op in "$@"; do
  name="$(basename "$op" .py)"
  echo "== $DUMPS/$name ($(date -u +%H:%M:%SZ))" >>"$OUT/micro.txt"
  timeout 240 python3 "$ROOT/bench/micro/candidates_torch.py" "$op" "$DUMPS/$name" --only "$ONLY" \
    --so-dir "$SO_DIR" >>"$OUT/micro.txt" 2>&1 || echo "$name: exit $?" >>"$OUT/micro.txt"
done
if [ -n "${EGG_AB_NCU:-}" ]; then
  name="${EGG_AB_NCU%%:*}" cand="${EGG_AB_NCU##*:}"
  for op in "$@"; do
    [ "$(basename "$op" .py)" = "$name" ] || continue
    timeout 120 ncu --section SpeedOfLight --section Occupancy --section WarpStateStats \
      --section SchedulerStats -k 'regex:kernel|flash|fmha|sdpa|attention' -c 10 \
      python3 "$ROOT/bench/micro/candidates_torch.py" "$op" "$DUMPS/$name" --only "$cand" --ncu-names --so-dir "$SO_DIR" \
      >"$OUT/ncu.txt" 2>&1 || echo "ncu: exit $?" >>"$OUT/ncu.txt"
  done
fi
cat "$OUT/micro.txt"
