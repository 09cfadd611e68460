#!/bin/bash
# Fake egg-harness: dies from SIGSEGV after writing to stderr.
echo "about to crash" >&2
kill -SEGV $$
