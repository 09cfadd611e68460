#!/usr/bin/env bash
# clang-tidy over the generator's sources with the checks of generator/.clang-tidy (every finding
# is an error). Needs a configured build tree for compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS
# is on) and Debian 12's clang-tidy (14).
#
#   tools/check_tidy.sh [BUILD_DIR] [FILE...]    # default: build/, every generator/**/*.cpp
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${1:-build}"
[ "$#" -gt 0 ] && shift

TIDY=""
for c in clang-tidy-14 clang-tidy; do
  if command -v "$c" >/dev/null; then TIDY="$c"; break; fi
done
if [ -z "$TIDY" ]; then
  echo "check_tidy: clang-tidy is not installed: apt-get install clang-tidy (Debian 12: version 14)" >&2
  [ -n "${CI:-}" ] && exit 1
  exit 77  # outside CI: a skip (ctest SKIP_RETURN_CODE)
fi
if [ ! -f "$BUILD/compile_commands.json" ]; then
  echo "check_tidy: $BUILD/compile_commands.json is missing: configure first (cmake --preset default)" >&2
  exit 1
fi

files=("$@")
if [ "${#files[@]}" -eq 0 ]; then
  mapfile -t files < <(git ls-files -- 'generator/*.cpp')
fi

# One clang-tidy per core; GCC-only warning flags in the compile commands are not clang's business.
jobs="$(nproc 2>/dev/null || echo 2)"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
printf '%s\n' "${files[@]}" |
  xargs -P "$jobs" -n 4 "$TIDY" -p "$BUILD" --quiet --extra-arg=-Wno-unknown-warning-option \
    >"$log" 2>&1 && rc=0 || rc=$?
if [ "$rc" -ne 0 ]; then
  # The findings with their context; a clang-tidy that failed otherwise (a crash, a file that does
  # not parse) shows its output's end.
  if grep -q -E ' (error|warning): ' "$log"; then
    grep -A3 -E ' (error|warning): ' "$log" | head -200 >&2 || true
  else
    tail -40 "$log" >&2
  fi
  echo "check_tidy: findings in the generator (checks: generator/.clang-tidy); fix them, or explain a" \
       "deliberate case with // NOLINT(<check>)" >&2
  exit 1
fi
echo "check_tidy: ${#files[@]} files clean"
