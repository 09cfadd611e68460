#!/bin/bash
# Fake egg-harness: exits without writing result.json (a candidate that calls exit()).
exit 3
