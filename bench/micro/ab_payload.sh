#!/usr/bin/env bash
# The CPU machine's half of a candidates A/B (bench/micro/candidates_ab.sh): traces each op, dumps
# every family's candidates (Families.DumpEveryCandidateForNvcc), keeps those whose ids are named,
# and compiles them into libraries, so the GPU call only loads and times them.
#
#   bash bench/micro/ab_payload.sh OUT "attention.wg:128x128:p attention.flash:128x128:w4:qs" OP.py...
#
# Writes OUT/<family>/<op>/<n>.cu|.id|include and OUT/so/*.so. EGG_AB_WGMMA=1 dumps the sm_90a
# candidates too. Needs the default build (build/) and EGG_PYTHON. Then, on the GPU machine with
# `carry: ["OUT"]`:
#   EGG_AB_SO_DIR=OUT/so bash bench/micro/candidates_ab.sh "" OUT/<family> OP.py...
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$1"
OUT="$(cd "$1" && pwd)" IDS="$2"
shift 2
PY="${EGG_PYTHON:-python3}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
for op in "$@"; do
  name="$(basename "$op" .py)"
  PYTHONPATH="$ROOT/python" "$PY" -m egg_frontend trace --op "$op" --out "$WORK/specs/$name" >/dev/null
done
EGG_FAMILY_WGMMA="${EGG_AB_WGMMA:-0}" EGG_FAMILY_SPEC_DIR="$WORK/specs" EGG_FAMILY_OUT_DIR="$WORK/dumps" \
  "$ROOT/build/tests/unit/egg_unit_tests" --gtest_filter=Families.DumpEveryCandidateForNvcc >/dev/null
mkdir -p "$OUT/so"
for dir in "$WORK"/dumps/*/*/; do
  family="$(basename "$(dirname "$dir")")" name="$(basename "$dir")"
  kept=0
  for id in $IDS; do
    for f in "$dir"*.id; do
      [ "$(cat "$f")" = "$id" ] || continue
      mkdir -p "$OUT/$family/$name"
      cp "$f" "${f%.id}.cu" "$OUT/$family/$name/"
      kept=$((kept + 1))
      break
    done
  done
  if [ "$kept" -gt 0 ]; then
    cp -r "$dir/include" "$OUT/$family/$name/"
    echo "$family/$name: $kept candidate(s)"
  fi
done
# The libraries, two nvcc at a time.
(cd "$ROOT/bench/micro" && "$PY" - "$OUT" <<'EOF'
import concurrent.futures
import glob
import os
import sys

import candidates_torch

out = sys.argv[1]
jobs = [(cu, os.path.join(os.path.dirname(cu), "include"))
        for cu in sorted(glob.glob(os.path.join(out, "*", "*", "*.cu")))]
with concurrent.futures.ThreadPoolExecutor(2) as pool:
    for (cu, _), (so, err) in zip(jobs, pool.map(lambda j: candidates_torch.build(*j, os.path.join(out, "so")), jobs)):
        print("%s: %s" % (os.path.relpath(cu, out), os.path.basename(so) if so else "nvcc failed: " + err))
EOF
)
