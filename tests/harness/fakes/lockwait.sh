#!/bin/bash
# Fake egg-harness: waits 2.5 s for the GPU lock (its marker in the work folder), then verifies.
. "$(dirname "$0")/common.sh"
mkdir -p "$WORK"
echo $$ > "$WORK/gpu-lock.wait"
sleep 2.5
rm -f "$WORK/gpu-lock.wait"
printf '{"schema": 1, "status": "verified", "message": "ok", "gpu": {"name": "Fake GPU"}}\n' > "$OUT"
exit 0
