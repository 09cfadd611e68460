#!/bin/bash
# Fake egg-harness: writes a malformed result.json.
. "$(dirname "$0")/common.sh"
echo '{"status": ' > "$OUT"
exit 0
