#!/usr/bin/env bash
# make bench: Google Benchmark programs. With TINYGRAD_REF=<checkout of tinygrad a9069c17> the reference is timed on
# the same corpus for a side-by-side number.
set -euo pipefail
BUILD=${1:-build}
ROOT=$(pwd)
"$BUILD/tests/bench_symbolic" --benchmark_counters_tabular=true
if [ -n "${TINYGRAD_REF:-}" ]; then
  echo
  echo "== the reference on the same corpus ($TINYGRAD_REF)"
  (cd "$TINYGRAD_REF" && PYTHONPATH=. python3 "$ROOT/tests/bench/bench_reference_symbolic.py" 3)
  (cd "$TINYGRAD_REF" && TRACK_MATCH_STATS=1 PYTHONPATH=. python3 "$ROOT/tests/bench/bench_reference_symbolic.py" 2 | tail -1)
fi
