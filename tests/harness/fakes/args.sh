#!/bin/bash
# Fake egg-harness: reports its argv in the message.
ARGS="$*"
. "$(dirname "$0")/common.sh"
printf '{"schema": 1, "status": "mismatch", "message": "%s"}\n' "$ARGS" > "$OUT"
exit 10
