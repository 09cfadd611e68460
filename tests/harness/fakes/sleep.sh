#!/bin/bash
# Fake egg-harness: hangs, with a grandchild that must be killed too.
. "$(dirname "$0")/common.sh"
sleep 300 &
echo $! > "$WORK/grandchild.pid"
wait
