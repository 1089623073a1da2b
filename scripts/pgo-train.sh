#!/usr/bin/env bash
# Records the profile that `make PGO=1` and `make bench` optimize the engine library with: builds the benchmarks with
# an instrumented engine in <build>/pgo-train (no GUI, no tests) and runs them briefly: the compile stack on its three models (the MLP,
# the ResNet-style stack and beautiful_mnist's training step) with both CPU renderers, on one thread and on two; the
# codegen of the 88 reference kernels; the scheduler's golden graphs (the compile stack weighs most, as in use). The
# profile is left in <profile dir>. If any step fails, the profile is left empty and the build goes on without one.
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
  echo "pgo-train: $1; building without a profile (PGO=0, the default, skips this step)" >&2
  rm -rf "${PROFILE:?}"/*
  exit 0
}
echo "== PGO: building the engine instrumented in $TRAIN"
cmake -S . -B "$TRAIN" -G Ninja -DTG_PGO=GENERATE "-DTG_PGO_DIR=$PROFILE" -DTG_BUILD_GUI=OFF -DTG_BUILD_TESTS=OFF \
  -DTG_BUILD_BENCH=ON > "$TRAIN.log" 2>&1 ||
  fail "configuring the instrumented build failed (see $TRAIN.log)"
cmake --build "$TRAIN" -j "$JOBS" --target bench_compile_stack bench_codegen bench_schedule \
  >> "$TRAIN.log" 2>&1 || fail "building the instrumented benchmarks failed (see $TRAIN.log)"
echo "== PGO: recording the profile (the compile stack, codegen of the reference kernels, the scheduler)"
start=$(date +%s)
for dev in CPU CPU:LLVM; do
  for parallel in 0 2; do
    DEV=$dev PARALLEL=$parallel BENCH_NO_COMPILE=1 BENCH_MIN_MS=0 "$TRAIN/tests/bench_compile_stack" 2 >> "$TRAIN.log" 2>&1 ||
      fail "the instrumented benchmark failed (DEV=$dev PARALLEL=$parallel; see $TRAIN.log)"
  done
done
run() { "$@" >> "$TRAIN.log" 2>&1 || fail "the instrumented $(basename "$1") failed (see $TRAIN.log)"; }
run "$TRAIN/tests/bench_codegen" --benchmark_min_time=0.01
run "$TRAIN/tests/bench_schedule" --benchmark_min_time=0.01
n=$(find "$PROFILE" -name '*.gcda' | wc -l)
[ "$n" -gt 0 ] || fail "the instrumented benchmark wrote no profile"
echo "== PGO: $n profiles in $PROFILE ($(( $(date +%s) - start )) s)"
