#!/usr/bin/env bash
# make bench: Google Benchmark programs. With TINYGRAD_REF=<checkout of tinygrad a9069c17> the reference is timed on
# the same corpus for a side-by-side number.
set -euo pipefail
BUILD=${1:-build}
ROOT=$(pwd)
if [ ! -x "$BUILD/tests/bench_symbolic" ]; then
  echo "bench: $BUILD has no benchmarks ($BUILD/tests/bench_*): it is configured with TG_BUILD_BENCH=OFF or without" \
       "Google Benchmark; configure it with -DTG_BUILD_BENCH=ON (libbenchmark-dev)" >&2
  exit 1
fi
TV="$BUILD/gui/tinyviz"
"$BUILD/tests/bench_symbolic" --benchmark_counters_tabular=true
if [ -n "${TINYGRAD_REF:-}" ]; then
  echo
  echo "== the reference on the same corpus ($TINYGRAD_REF)"
  (cd "$TINYGRAD_REF" && PYTHONPATH=. python3 "$ROOT/tests/bench/bench_reference_symbolic.py" 3)
  (cd "$TINYGRAD_REF" && TRACK_MATCH_STATS=1 PYTHONPATH=. python3 "$ROOT/tests/bench/bench_reference_symbolic.py" 2 | tail -1)
fi

echo
echo "== codegen: full_rewrite_to_sink + linearize + render per kernel (88 reference kernel ASTs)"
"$BUILD/tests/bench_codegen" --benchmark_counters_tabular=true
if [ -n "${TINYGRAD_REF:-}" ]; then
  echo "== the reference on the same ASTs"
  (cd "$TINYGRAD_REF" && PYTHONPATH=. python3 "$ROOT/tests/bench/bench_reference_codegen.py" 3)
fi

echo
echo "== scheduler: create_linear_with_vars on the biggest golden schedules (reference: tests/data/schedule_reference_times.txt)"
"$BUILD/tests/bench_schedule" --benchmark_counters_tabular=true

echo
echo "== compile stack: MLP 784-512-512-10 forward (batch 512), a ResNet-style conv stack and beautiful_mnist's first training step: schedule, codegen, LLVM"
"$BUILD/tests/bench_compile_stack" 3
if [ -n "${TINYGRAD_REF:-}" ]; then
  (cd "$TINYGRAD_REF" && PYTHONPATH=. python3 "$ROOT/tests/bench/bench_reference_compile_stack.py" 3)
  # the reference's own engine (lower_and_compile on its worker pool), to compare with the "distinct kernels" lines
  for p in 0 2; do (cd "$TINYGRAD_REF" && PARALLEL=$p PYTHONPATH=. python3 "$ROOT/tests/bench/bench_reference_lower.py" 3); done
fi

echo
echo "== CPU backend: LLVM compile per kernel, 16M-element add (GB/s) and 1024^3 matmul (GFLOPS), 1 and 2 threads"
"$BUILD/tests/bench_cpu" --benchmark_counters_tabular=true

echo
echo "== training: beautiful_mnist's steady step (Fashion-MNIST, batch 512, Adam, TinyJit), median of steps 2-7, side by"
echo "   side with PyTorch (tests/bench/torch_mnist.py: the same model, batch, optimizer and thread count), alternating"
echo "   in three rounds; then ours with the reference's opts and loop nesting (CPU_TILE=0 LOOP_ORDER=0)"
echo "   CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, $(grep -o -m1 -w 'avx512f' /proc/cpuinfo || grep -o -m1 -w 'avx2' /proc/cpuinfo)"
if [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  # median STEP_LINES: the median of the "step N ... T s" lines' times for N >= 2
  median() { awk '/^step/ && $2 >= 2 {print $5}' | sort -g | awk '{t[NR] = $1} END {printf "%.3f", t[int((NR + 1) / 2)]}'; }
  TORCH_OK=0
  /usr/bin/python3 -c "import torch" 2>/dev/null && TORCH_OK=1
  for round in 1 2 3; do
    ours=$("$BUILD/examples/beautiful_mnist" --steps 8 | median)
    if [ $TORCH_OK = 1 ]; then
      torch=$(/usr/bin/python3 "$ROOT/tests/bench/torch_mnist.py" --steps 8 --threads "$(nproc)" | median)
      awk -v r=$round -v o="$ours" -v t="$torch" \
        'BEGIN {printf "round %d: tinygrad-cpp %.3f s, PyTorch %.3f s, ratio %.2fx\n", r, o, t, o / t}'
    else
      echo "round $round: tinygrad-cpp $ours s (PyTorch: /usr/bin/python3 has no torch; make bench installs python3-torch)"
    fi
  done
  echo "the reference's opts and loop nesting (CPU_TILE=0 LOOP_ORDER=0): $(CPU_TILE=0 LOOP_ORDER=0 \
    "$BUILD/examples/beautiful_mnist" --steps 8 | median) s"
  # where one steady step's time goes: the kernels of step 2 (between its marker and step 3's), from the profile
  echo "== the kernels of one steady step (PROFILE=1, tinyviz-cli profile -t between the markers of steps 2 and 3)"
  KTRACE=$(mktemp -d)/kernels.trace.db
  PROFILE=1 VIZ_PATH="$KTRACE" "$BUILD/examples/beautiful_mnist" --steps 4 >/dev/null
  "$BUILD/viz/tinyviz-cli" profile "$KTRACE" --interval "train @ 2" "train @ 3" -t 16 |
    awk 'BEGIN {printf "%-34s %10s %8s %8s %7s\n", "kernel", "ms", "GFLOP", "GFLOPS", "% step"}
         $1 == "USER" {step = $5 + 0; next}
         $1 == "CPU" {ms = $3 + 0; if ($3 ~ /us$/) ms /= 1000; gf = $6 + 0;
                      printf "%-34s %10.1f %8.2f %8.0f %6.1f%%\n", $2, ms, ms * gf / 1000, gf, 100 * ms / step}'
  rm -f "$KTRACE"*
  # what recording the profile costs: the same steady step without and with PROFILE=1 (kernel runs, buffer allocs and
  # frees, markers and ranges into a trace), three pairs alternated so the machine's drift hits both
  echo "== profiling: the steady step (median of steps 2-7) without and with PROFILE=1, three alternated pairs"
  PTRACE=$(mktemp -d)/profile.trace.db
  for round in 1 2 3; do
    for prof in 0 1; do
      PROFILE=$prof VIZ_PATH="$PTRACE" "$BUILD/examples/beautiful_mnist" --steps 8 | awk '/^step/ && $2 >= 2 {print $5}' |
        sort -g | awk -v p="$prof" -v r="$round" '{t[NR] = $1} END {printf "round %d PROFILE=%d: median %.3f s\n", r, p, t[int((NR + 1) / 2)]}'
      rm -f "$PTRACE"*
    done
  done | awk '{print} /PROFILE=0/ {off = $5} /PROFILE=1/ {printf "  PROFILE costs %+.1f%% of the step\n", ($5 / off - 1) * 100}'
else
  echo "(dataset-fashion-mnist is not installed: scripts/install-deps.sh installs it)"
fi

echo
echo "== CL (OpenCL on the machine's platform, PoCL): beautiful_mnist side by side. First step: each engine's"
echo "   compiled-kernel cache is off (CCACHE=0), so it schedules, generates and builds every kernel; PoCL's own kernel"
echo "   cache stays on (a first run of ours fills it), so the platform's compile of the same text is not paid twice."
echo "   Steady step: the median wall time of steps 2-5, and the CPU time of steps 2-5 (a 6-step run minus a 2-step run)"
echo "   per step, which the machine's other load moves less"
if [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  CL_ENV="DEV=CL CCACHE=0"
  DEV=CL "$BUILD/examples/beautiful_mnist" --steps 1 >/dev/null 2>&1 || echo "(DEV=CL failed: no OpenCL device?)"
  # cl_report WHO TIME_FIELD CMD...: CMD followed by N runs N steps, printing "step" lines (TIME_FIELD: the seconds)
  cl_report() {
    local who=$1 field=$2 cpu2 cpu6 lines
    shift 2
    cpu2=$({ /usr/bin/time -f "%U %S" "$@" 2 >/dev/null; } 2>&1 | tail -1 | awk '{print $1 + $2}')
    lines=$(/usr/bin/time -o /tmp/tg-cl-bench.time -f "%U %S" "$@" 6 2>/dev/null | awk -v f="$field" '/^step/ {print $2, $f}')
    cpu6=$(awk '{print $1 + $2}' /tmp/tg-cl-bench.time)
    echo "$lines" | awk '$1 >= 2 && $1 <= 5 {print $2}' | sort -g |
      awk -v who="$who" -v first="$(echo "$lines" | awk '$1 == 0 {print $2}')" -v cpu="$(echo "$cpu6 $cpu2" | awk '{print ($1 - $2) / 4}')" \
        '{t[NR] = $1} END {printf "%s: first step %.2f s; steady step median %.3f s wall, %.3f s CPU\n", who, first,
          (t[int((NR + 1) / 2)] + t[int(NR / 2) + 1]) / 2, cpu}'
  }
  cl_report "tinygrad-cpp" 5 env $CL_ENV "$BUILD/examples/beautiful_mnist" --steps
  if [ -n "${TINYGRAD_REF:-}" ]; then
    # the reference's script reads STEPS: a wrapper turns the trailing N into it
    cl_report "reference" 6 env $CL_ENV bash -c 'cd "$0" && STEPS=$2 PYTHONPATH=. python3 "$1"' "$TINYGRAD_REF" \
      "$ROOT/tests/parity/gen_mnist_goldens.py"
  fi
else
  echo "(dataset-fashion-mnist is not installed: scripts/install-deps.sh installs it)"
fi

echo
if [ ! -x "$TV" ]; then
  echo "== tinyviz: not built ($BUILD is configured with TG_BUILD_GUI=OFF): no stepping benchmarks"
  exit 0
fi
echo "== tinyviz: stepping on graphs of about 100, 500, 2,000 and 5,000 nodes, and 100,000 steps on the timeline"
BIG="$BUILD/bench-big.trace.db"
"$BUILD/tests/gen_big_trace" "$BIG" --steps 100000 100 500 2000 5000 | while read -r _ id _; do
  TINYVIZ_TIMING=1 /usr/bin/time -f "peak memory %M KB" "$TV" --bench-step "$id" "$BIG" 2>&1 |
    grep -E "first graph drawn|frames|jump|timeline:|stall|peak memory" | sed 's/^tinyviz: //'
done
ls -l "$BIG" | awk '{printf "trace file %.1f MB\n", $5 / 1e6}'

echo
echo "== tinyviz on a real training trace: beautiful_mnist --steps 10 recorded with VIZ=-1 (again when the example changed)"
MTRACE="$BUILD/bench-mnist.trace.db"
if [ ! -s "$MTRACE" ] || [ "$BUILD/examples/beautiful_mnist" -nt "$MTRACE" ]; then
  rm -f "$MTRACE"
  start=$(date +%s%N)
  VIZ=-1 DEBUG=2 VIZ_PATH="$MTRACE" PRINT_MATCH_STATS=0 "$BUILD/examples/beautiful_mnist" --steps 10 2>&1 >/dev/null |
    grep -E "replay checkpoints" || true
  echo "recorded in $(( ($(date +%s%N) - start) / 1000000 )) ms"
fi
"$BUILD/viz/tinyviz-cli" info "$MTRACE" | grep -E "^(steps|matches|kernels)"
# the step with the most matches (a devectorize pass over the biggest kernel)
MSTEP=$(sqlite3 "$MTRACE" "SELECT id FROM steps ORDER BY n_matches DESC LIMIT 1" 2>/dev/null || true)
if [ -n "$MSTEP" ]; then
  TINYVIZ_TIMING=1 /usr/bin/time -f "peak memory %M KB" "$TV" --bench-step "$MSTEP" "$MTRACE" 2>&1 |
    grep -E "first graph drawn|frames|jump|timeline:|longest|peak memory|tinyviz: stall" | sed 's/^tinyviz: //'
  # launch straight onto the step's last frame (what `VIZ=1` or a bookmark does)
  MCTX=$(sqlite3 "$MTRACE" "SELECT context FROM steps WHERE id=$MSTEP")
  MLAST=$(sqlite3 "$MTRACE" "SELECT n_matches FROM steps WHERE id=$MSTEP")
  TINYVIZ_TIMING=1 "$TV" --screenshot "$BUILD/bench-deep.png" --select "$MCTX/$MSTEP/$MLAST" "$MTRACE" 2>&1 |
    grep "first graph drawn" | sed "s|^tinyviz: |launched with --select $MCTX/$MSTEP/$MLAST: |"
else
  echo "(sqlite3 not installed: no step to step through)"
fi
ls -l "$MTRACE" | awk '{printf "trace file %.1f MB\n", $5 / 1e6}'
