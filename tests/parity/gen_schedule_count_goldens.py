#!/usr/bin/env python3
# Regenerates tests/parity/schedule_count_goldens.txt: the kernel-count assertions of the reference's
# test/null/test_schedule.py, with the big SINK each assertion schedules.
#
# Run from a checkout of tinygrad a9069c17 (the test file needs its test/ folder):
#   cd <tinygrad> && python3 <repo>/tests/parity/gen_schedule_count_goldens.py <repo>/tests/parity/schedule_count_goldens.txt
# (DEV=NULL as the test file is meant to run.)
#
# Capture: test.helpers.check_schedule(t, allowed, ...) is wrapped where test_schedule.py imported it; while it runs,
# every create_linear_with_vars call records its big SINK and the LINEAR it returned (the last one is the asserted schedule: to_prerealize runs
# first). We write the asserted count, the reference's count (kernels whose AST is a SINK unless filter_sink=False),
# and the big SINK.
#
# File format (per-case node pool, "+ <uop_codec node line>" appends one node, "@i" refers to it):
#   case <id> <unittest id> <n-th check of the test>
#   allowed <n> ref <n|error> filter <0|1>
#   ctx <VAR=value ...>     the scheduler's ContextVars when the check ran
#   big_sink @i
#   linear @j               the LINEAR create_linear_with_vars returned (memory planned)
import os, sys, unittest
os.environ["DEV"] = "NULL"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
from uop_codec import enc_arg, dtype_attr
# numpy is not installed: test/helpers.py imports it at module level; a stub lets the file load (tests that really use
# numpy error out and are not counted)
import types
class _NumpyStub(types.ModuleType):
  def __getattr__(self, name):
    if name.startswith("__"): raise AttributeError(name)
    raise ImportError(f"numpy is not installed (numpy.{name})")
sys.modules.setdefault("numpy", _NumpyStub("numpy"))
from tinygrad.uop.ops import UOp, Ops
import tinygrad.tensor as T
import test.helpers as H
import test.null.test_schedule as TS

out_path = sys.argv[1] if len(sys.argv) > 1 else "schedule_count_goldens.txt"
cases: list[dict] = []
state = {"in_check": False, "sinks": [], "test": "?", "n": {}}

orig_clwv = T.create_linear_with_vars
def create_linear_with_vars(big_sink):
  ret = orig_clwv(big_sink)
  if state["in_check"]: state["sinks"].append((big_sink, ret[0]))
  return ret
T.create_linear_with_vars = create_linear_with_vars

# the settings the scheduler reads (test classes set some in setUp, e.g. TestSchedule's SPLIT_REDUCEOP=0)
from tinygrad.helpers import ContextVar
SCHED_VARS = {"SPLIT_REDUCEOP", "PCONTIG", "MAX_KERNEL_BUFFERS", "NO_MEMORY_PLANNER", "FLOAT16", "OPENPILOT_HACKS", "SCACHE"}
orig_check = H.check_schedule
def check_schedule(t, allowed, to_prerealize=None, filter_sink=True):
  state.update(in_check=True, sinks=[])
  n = state["n"][state["test"]] = state["n"].get(state["test"], -1) + 1
  c = {"test": state["test"], "n": n, "allowed": allowed, "filter": filter_sink, "ref": "error",
       "ctx": " ".join(f"{k}={v.value}" for k, v in sorted(ContextVar._cache.items()) if k in SCHED_VARS)}
  try:
    ret = orig_check(t, allowed, to_prerealize, filter_sink)
    c["ref"] = allowed
    return ret
  except H.KernelCountException as e:
    c["ref"] = e.got
    raise
  finally:
    state["in_check"] = False
    if state["sinks"]:
      c["big_sink"], c["linear"] = state["sinks"][-1]
      cases.append(c)
TS.check_schedule = check_schedule

class Result(unittest.TextTestResult):
  def startTest(self, test):
    state["test"] = test.id().replace("test.null.test_schedule.", "")
    super().startTest(test)

suite = unittest.defaultTestLoader.loadTestsFromModule(TS)
res = unittest.TextTestRunner(resultclass=Result, verbosity=0, stream=open(os.devnull, "w")).run(suite)
print(f"ran {res.testsRun} tests: {len(res.failures)} failures, {len(res.errors)} errors, {len(res.skipped)} skipped")

with open(out_path, "w") as f:
  f.write("# written by tests/parity/gen_schedule_count_goldens.py from tinygrad a9069c17 test/null/test_schedule.py\n")
  for cid, c in enumerate(cases):
    pool: dict = {}
    def ref(root: UOp) -> str:
      for u in root.toposort():
        if u in pool: continue
        f.write(f"+ {u.op.name} {dtype_attr(u.dtype)} {enc_arg(u.arg)} {enc_arg(u.tag)} {','.join(str(pool[s]) for s in u.src)}\n")
        pool[u] = len(pool)
      return f"@{pool[root]}"
    f.write(f"case {cid} {c['test']} {c['n']}\n")
    f.write(f"allowed {c['allowed']} ref {c['ref']} filter {int(c['filter'])}\n")
    f.write(f"ctx {c['ctx']}\n")
    f.write(f"big_sink {ref(c['big_sink'])}\n")
    f.write(f"linear {ref(c['linear'])}\n")
print(f"{len(cases)} kernel-count checks from {len({c['test'] for c in cases})} tests -> {out_path}")
