#!/usr/bin/env bash
# The README's two commands, verbatim, on the machine this runs on (the GPU machine: issue 15 asks
# that they run there as written, with what is installed):
#
#   bash tools/gpu_readme.sh [main|test|both]      # default: main
#
# `main` runs the main job (the first ```sh block under the quickstart heading: set-up, build EGG,
# generate, verify and time the quickstart's kernels, compile and run it); `test` runs the test
# command (set-up with --tests, configure, build, ctest). Each is cut at EGG_README_DEADLINE seconds
# from the start (default 560: one device call) with its log and what finished kept, so a call the
# device tool would end leaves evidence. Both are taken from README.md by
# tests/lint/readme_commands.py, the same parser the lint test checks them with. Logs go to $OUT
# (else ./gpu-readme-out): readme-main.log, readme-test.log, readme.txt (the summary), ps.log (the main job's
# processes every 5 s) and the quickstart's manifests (quickstart-manifests.tgz): five files, so run it in a device call of its
# own (the device tool brings back at most 8 files, and tools/gpu_suite.sh writes 8).
set -u -o pipefail
START=$SECONDS
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$ROOT/gpu-readme-out}"
WHAT="${1:-main}"
mkdir -p "$OUT"
SUMMARY="$OUT/readme.txt"
: >"$SUMMARY"
say() { echo "gpu_readme: $*" | tee -a "$SUMMARY"; }
cd "$ROOT"

command_of() {  # main | test: the README's command, as the lint test reads it
  python3 - "$ROOT" "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + "/tests/lint")
import readme_commands as rc
text = open(sys.argv[1] + "/README.md", encoding="utf-8").read()
blocks = rc.blocks_under(text, r"^#+ .*quickstart") if sys.argv[2] == "main" else \
         rc.blocks_under(text, r"^#+ Test\b")
print(blocks[0] if blocks else "")
PY
}

say "date: $(date -u +%FT%TZ) gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo none)"
if [ "$WHAT" = main ] || [ "$WHAT" = both ]; then
  MAIN="$(command_of main)"
  [ -n "$MAIN" ] || { say "README.md has no main job"; exit 1; }
  say "main job:"
  printf '%s\n' "$MAIN" | sed 's/^/    /' | tee -a "$SUMMARY"
  LEFT=$(( ${EGG_README_DEADLINE:-560} - (SECONDS - START) ))
  # Every line stamped with the seconds since the start, and the processes sampled every 5 s
  # (ps.log): Ninja holds a generation's own progress lines until it ends.
  ( while :; do echo "== $((SECONDS - START)) s"; ps -eo pid,ppid,etimes,pcpu,rss,args --sort=pid |
      grep -E "egg|python|nvcc|cicc|ptxas|sanitizer|ninja|apt|pip" | grep -v grep | cut -c1-300; sleep 5; done ) \
    >"$OUT/ps.log" 2>&1 &
  SAMPLER=$!
  timeout --signal=TERM "$LEFT" bash -e -c "$MAIN" 2>&1 |
    while IFS= read -r line; do printf '%4d %s\n' $((SECONDS - START)) "$line"; done >"$OUT/readme-main.log"
  rc=${PIPESTATUS[0]}
  kill "$SAMPLER" 2>/dev/null
  say "main job: exit $rc after $((SECONDS - START)) s$([ "$rc" -eq 124 ] && echo " (cut at the deadline, $LEFT s)")"
  grep -E "egg: |verified|unverified|kernel .* ms|quickstart" "$OUT/readme-main.log" | tail -20 | tee -a "$SUMMARY"
  find build/quickstart -name manifest.json 2>/dev/null | tar -czf "$OUT/quickstart-manifests.tgz" -T - 2>/dev/null
  [ "$rc" -eq 0 ] || { tail -40 "$OUT/readme-main.log"; exit "$rc"; }
fi
if [ "$WHAT" = test ] || [ "$WHAT" = both ]; then
  TEST="$(command_of test)"
  [ -n "$TEST" ] || { say "README.md has no test command"; exit 1; }
  LEFT=$(( ${EGG_README_DEADLINE:-560} - (SECONDS - START) ))
  say "test command (cut after $LEFT s): $TEST"
  timeout --signal=TERM "$LEFT" bash -e -c "$TEST" >"$OUT/readme-test.log" 2>&1
  rc=$?
  say "test command: exit $rc after $((SECONDS - START)) s$([ "$rc" -eq 124 ] && echo ' (cut at the deadline)')"
  # ctest's status column: "Passed", "***Skipped", "***Failed", "***Timeout", "***Exception: ...";
  # the stars keep a test whose name holds one of these words ("...FailedCandidates...") apart.
  passed=$(grep -cE "^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed +[0-9.]+ sec$" "$OUT/readme-test.log")
  skipped=$(grep -cE "^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped" "$OUT/readme-test.log")
  failed=$(grep -E "^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*(Failed|Timeout|Exception)" "$OUT/readme-test.log")
  unfinished=$(comm -23 <(grep -oE "Start +[0-9]+: [^ ]+" "$OUT/readme-test.log" | awk '{print $3}' | sort) \
                        <(grep -oE "Test +#[0-9]+: [^ ]+" "$OUT/readme-test.log" | awk '{print $3}' | sort))
  say "tests finished: $passed passed, $skipped skipped, $(printf '%s' "$failed" | grep -c .) failed"
  [ -n "$failed" ] && printf '%s\n' "$failed" | tee -a "$SUMMARY"
  [ -n "$unfinished" ] && say "started, not finished: $(printf '%s' "$unfinished" | tr '\n' ' ')"
  grep -E "tests passed|tests failed" "$OUT/readme-test.log" | tee -a "$SUMMARY"
  exit "$rc"
fi
