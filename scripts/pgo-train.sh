#!/usr/bin/env bash
# Records the profile that `make` optimizes the engine library with (PGO=1, the default): builds the compile-stack
# benchmark with an instrumented engine in <build>/pgo-train, runs it on its three models (the MLP, the ResNet-style
# stack and beautiful_mnist's training step) with both CPU renderers, on one thread and on two, and leaves the profile
# in <profile dir>. If any step fails, the profile is left empty and the build goes on without one.
# usage: scripts/pgo-train.sh <build dir> <profile dir> [jobs]
set -uo pipefail
BUILD=$1
PROFILE=$2
JOBS=${3:-$(nproc)}
TRAIN="$BUILD/pgo-train"
mkdir -p "$BUILD"
rm -rf "$PROFILE"
mkdir -p "$PROFILE"
fail() {
  echo "pgo-train: $1; building without a profile (PGO=0 skips this step)" >&2
  rm -rf "${PROFILE:?}"/*
  exit 0
}
echo "== PGO: building the engine instrumented in $TRAIN"
cmake -S . -B "$TRAIN" -G Ninja -DTG_PGO=GENERATE "-DTG_PGO_DIR=$PROFILE" > "$TRAIN.log" 2>&1 ||
  fail "configuring the instrumented build failed (see $TRAIN.log)"
cmake --build "$TRAIN" -j "$JOBS" --target bench_compile_stack >> "$TRAIN.log" 2>&1 ||
  fail "building the instrumented benchmark failed (see $TRAIN.log)"
echo "== PGO: recording the profile (the compile stack on three models, one thread and two)"
start=$(date +%s)
for dev in CPU CPU:LLVM; do
  for parallel in 0 2; do
    DEV=$dev PARALLEL=$parallel BENCH_NO_COMPILE=1 "$TRAIN/tests/bench_compile_stack" 2 >> "$TRAIN.log" 2>&1 ||
      fail "the instrumented benchmark failed (DEV=$dev PARALLEL=$parallel; see $TRAIN.log)"
  done
done
n=$(find "$PROFILE" -name '*.gcda' | wc -l)
[ "$n" -gt 0 ] || fail "the instrumented benchmark wrote no profile"
echo "== PGO: $n profiles in $PROFILE ($(( $(date +%s) - start )) s)"
