# Sourced by the fake harnesses: sets OUT (the --out argument) and WORK (--work).
OUT=""; WORK=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift ;;
    --work) WORK="$2"; shift ;;
  esac
  shift
done
