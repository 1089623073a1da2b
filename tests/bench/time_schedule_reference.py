#!/usr/bin/env python3
# Times the reference's create_linear_with_vars on the same big SINKs tests/bench/bench_schedule.cpp times (the largest
# schedules of schedule_goldens.txt and the MLP 784-512-512-10 forward at batch 512), for comparison.
#
#   cd <tinygrad a9069c17> && python3 <repo>/tests/bench/time_schedule_reference.py <repo>/tests/data/schedule_goldens.txt
# prints one line per sink: "<case> <program> <nodes> <median ms with SPEC=1 (the reference's default)> <median ms with
# SPEC=0>" (SCACHE=0: every call schedules; no tracking)
import os, sys, time, statistics
os.environ.setdefault("DEV", "CPU")
os.environ["SCACHE"] = "0"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "parity"))
sys.path.insert(0, os.getcwd())
from uop_codec import pooled_records
from tinygrad.uop.ops import UOp, Ops
from tinygrad.dtype import dtypes, ConstFloat
from tinygrad.schedule import create_linear_with_vars
from tinygrad.helpers import Context

# the programs the C++ benchmark times (keep in sync with tests/bench/bench_schedule.cpp)
BENCH = ["mlp_784_512_512_10", "conv2d_backward", "mlp_softmax", "many_inputs", "softmax", "layernorm", "conv2d", "chain_of_kernels"]

def load(path):
  # CONST floats are ConstFloat (-0.0, nan), as UOp.const makes them
  def const_arg(arg, dtype): return ConstFloat(arg) if isinstance(arg, float) else arg
  cases, cur = {}, None
  for line, pool in pooled_records(path, "case ", const_arg):
    if line.startswith("case "):
      _, cid, prog, n = line.split(" ")
      cur = (int(cid), prog, int(n))
    elif line.startswith("big_sink @"):
      cases[cur] = pool[int(line[10:])]
  return cases

cases = load(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "schedule_goldens.txt"))
for (cid, prog, n), sink in cases.items():
  if prog not in BENCH or n != 0: continue
  def med(spec):
    times = []
    with Context(SPEC=spec):
      for _ in range(7):
        st = time.perf_counter()
        create_linear_with_vars(sink)
        times.append((time.perf_counter() - st) * 1e3)
    return statistics.median(times)
  print(f"{cid} {prog} {len(sink.toposort())} {med(1):.3f} {med(0):.3f}")
