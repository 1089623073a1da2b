#!/usr/bin/env bash
# make demo: run the rewrite demo with recording on, then show where the trace is and what it holds.
set -euo pipefail
BUILD=${1:-build}
TV="$BUILD/gui/tinyviz"
# the screenshots need tinyviz, which TG_BUILD_GUI=OFF leaves out
have_gui() {
  [ -x "$TV" ] && return 0
  echo "(no screenshots: $TV is not built; $BUILD is configured with TG_BUILD_GUI=OFF or without Qt 6: configure it" \
       "with -DTG_BUILD_GUI=ON)"
  return 1
}
TRACE="$(pwd)/$BUILD/demo.trace.db"
echo "== rewrite_demo: index expressions through the reference's symbolic passes, recorded with VIZ=-1"
VIZ=-1 VIZ_PATH="$TRACE" "$BUILD/examples/rewrite_demo"
echo
echo "== the trace: $TRACE"
"$BUILD/viz/tinyviz-cli" info "$TRACE"
echo
echo "== contexts"
"$BUILD/viz/tinyviz-cli" contexts "$TRACE"
echo
echo "== pattern statistics from the trace (top 15 rules by time; --step/--context to scope, --unmatched for dead rules)"
"$BUILD/viz/tinyviz-cli" stats "$TRACE" --top 15
echo
"$BUILD/viz/tinyviz-cli" verify "$TRACE"
echo
echo "From a terminal:  $BUILD/viz/tinyviz-cli steps $TRACE | less"
echo "                  $BUILD/viz/tinyviz-cli frame $TRACE <step> <match>"
echo "                  sqlite3 $TRACE 'SELECT * FROM steps LIMIT 5'"
echo
SHOTS="$(pwd)/$BUILD/screenshots"
echo "== tinyviz screenshots of the trace (headless) in $SHOTS"
if have_gui; then
  mkdir -p "$SHOTS"
  "$TV" --screenshot "$SHOTS/graph.png" --select 1/1/3 "$TRACE"
  "$TV" --screenshot "$SHOTS/divmod.png" --select 3/137/10 "$TRACE"
  "$TV" --screenshot "$SHOTS/stats.png" --tab stats --select 1 "$TRACE"
  "$TV" --screenshot "$SHOTS/timeline.png" --tab timeline "$TRACE"
fi
echo
KTRACE="$(pwd)/$BUILD/mnist.trace.db"
echo "== beautiful_mnist: 3 training steps on Fashion-MNIST (conv net, Adam, TinyJit), recorded with VIZ=-1"
VIZ=-1 VIZ_PATH="$KTRACE" "$BUILD/examples/beautiful_mnist" --steps "${DEMO_STEPS:-3}"
echo
echo "== the slowest kernels of the run"
"$BUILD/viz/tinyviz-cli" kernels "$KTRACE" --top 10
CTX=$(sqlite3 "$KTRACE" "SELECT p.context FROM kernel_events k JOIN programs p ON p.id=k.program WHERE p.context>0
                         GROUP BY k.program ORDER BY sum(k.t_end-k.t_start) DESC LIMIT 1" 2>/dev/null || true)
if [ -x "$TV" ]; then
  "$TV" --screenshot "$SHOTS/training_timeline.png" --tab timeline --select "${CTX:-1}" "$KTRACE"
  "$TV" --screenshot "$SHOTS/kernel_code.png" --tab code --select "${CTX:-1}" "$KTRACE"
  echo
  echo "Open them:   $TV $KTRACE"
  echo "             $TV $TRACE      (or run any example with VIZ=1)"
  if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then "$TV" "$KTRACE" & fi
else
  echo
  echo "Read them:   $BUILD/viz/tinyviz-cli info $KTRACE"
fi
