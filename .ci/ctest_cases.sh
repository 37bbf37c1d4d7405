#!/usr/bin/env bash
# Prints "ctest cases: N passed, N failed, N skipped" for a CTest build
# directory: the sum of the lines the test programs end with
# (tests/harness.h), from CTest's log of the last run.
set -euo pipefail
grep -hoE '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$1/Testing/Temporary/LastTest.log" |
  awk '{p += $1; f += $3; k += $5} END {printf "ctest cases: %d passed, %d failed, %d skipped\n", p, f, k}'
