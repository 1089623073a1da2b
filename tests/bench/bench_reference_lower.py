#!/usr/bin/env python3
# Times the reference's own lower_and_compile (engine/realize.py: codegen + LLVM compile of each distinct kernel of a
# schedule, on its worker pool of PARALLEL processes, or in the caller when PARALLEL=0) on the models of
# bench_reference_compile_stack.py. The compiles come from its disk cache (the same sources every pass), so this is
# its codegen as its engine runs it; bench_compile_stack's "distinct kernels" pass is ours. Each pass uses another TC_SELECT (a config with no effect on CPU programs, but part
# of the to_program cache key) so that no pass finds the previous pass's programs in the parent's or a worker's cache.
# Pass 1 also starts the pool (spawns and imports); the best later pass is the warm number. Each pass's
# schedule_linear is timed too: the engine rows of pair_compile_stack.py add the best one.
# cd <tinygrad checkout> && PARALLEL=2 PYTHONPATH=. python3 <repo>/tests/bench/bench_reference_lower.py [PASSES]
# (PARALLEL=0: in the caller alone)
import os, sys, time
os.environ["DEV"] = "CPU:LLVM"; os.environ["SCACHE"] = "0"
# the models: bench_reference_compile_stack.py's definitions (its text up to its own timing code)
src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_reference_compile_stack.py")).read()
m = {}
exec(src[:src.index("dev = Device")], m)
from tinygrad import Context
from tinygrad.helpers import PARALLEL
from tinygrad.uop.ops import Ops
from tinygrad.engine.realize import lower_and_compile
passes = int(sys.argv[1]) if len(sys.argv) > 1 else 5
only = os.environ.get("BENCH_MODEL")
for name, build in (("mlp", lambda: [m["mlp"]()]), ("resnet", lambda: [m["resnet"]()]), ("mnist_train", m["mnist_train"])):
  if only and only != name: continue
  times, sched = [], []
  for p in range(passes):
    outs = build()
    t0 = time.perf_counter(); linear = outs[0].schedule_linear(*outs[1:]); sched.append(time.perf_counter() - t0)
    with Context(TC_SELECT=1000 + p):
      t0 = time.perf_counter(); lower_and_compile(linear); times.append(time.perf_counter() - t0)
  asts = [c.src[0] for c in linear.src if c.src[0].op is Ops.SINK]
  print(f"reference {name}: {len(asts)} kernels, {len(set(asts))} distinct (lowered once each) | lower_and_compile (codegen + compile) on PARALLEL={PARALLEL.value} ms " +
        ", ".join(f"{t*1e3:.1f}" for t in times) + f" | warm {min(times[1:] or times)*1e3:.1f} ms" +
        f" | schedule (schedule_linear, before each pass) warm {min(sched[1:] or sched)*1e3:.1f} ms")
