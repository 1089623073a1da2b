#!/usr/bin/env python3
# Regenerates tests/data/schedule_count_goldens.txt: the kernel-count assertions of the reference's
# test/null/test_schedule.py, with the big SINK each assertion schedules.
#
# Run from a checkout of tinygrad a9069c17 (the test file needs its test/ folder):
#   cd <tinygrad> && python3 <repo>/tests/parity/gen_schedule_count_goldens.py <repo>/tests/data/schedule_count_goldens.txt
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
import os, sys
os.environ["DEV"] = "NULL"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_gen import out_path, write_pooled, stub_numpy, run_unittests, context_vars, TestCounter
stub_numpy()  # test/helpers.py imports numpy
import tinygrad.tensor as T
import test.helpers as H
import test.null.test_schedule as TS

OUT = out_path("schedule_count_goldens.txt")
cases: list[dict] = []
state = {"in_check": False, "sinks": []}
tests = TestCounter()

orig_clwv = T.create_linear_with_vars
def create_linear_with_vars(big_sink):
  ret = orig_clwv(big_sink)
  if state["in_check"]: state["sinks"].append((big_sink, ret[0]))
  return ret
T.create_linear_with_vars = create_linear_with_vars

# the settings the scheduler reads (test classes set some in setUp, e.g. TestSchedule's SPLIT_REDUCEOP=0)
SCHED_VARS = {"SPLIT_REDUCEOP", "PCONTIG", "MAX_KERNEL_BUFFERS", "NO_MEMORY_PLANNER", "FLOAT16", "OPENPILOT_HACKS", "SCACHE"}
orig_check = H.check_schedule
def check_schedule(t, allowed, to_prerealize=None, filter_sink=True):
  state.update(in_check=True, sinks=[])
  n = tests.next()
  c = {"test": tests.test, "n": n, "allowed": allowed, "filter": filter_sink, "ref": "error", "ctx": context_vars(SCHED_VARS)}
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

def start_test(test_id): tests.test = test_id.replace("test.null.test_schedule.", "")
res = run_unittests(TS, start_test)
print(f"ran {res.testsRun} tests: {len(res.failures)} failures, {len(res.errors)} errors, {len(res.skipped)} skipped")

def write_case(w, ref, cid, c):
  w(f"case {cid} {c['test']} {c['n']}")
  w(f"allowed {c['allowed']} ref {c['ref']} filter {int(c['filter'])}")
  w(f"ctx {c['ctx']}")
  w(f"big_sink {ref(c['big_sink'])}")
  w(f"linear {ref(c['linear'])}")
write_pooled(OUT, ["# written by tests/parity/gen_schedule_count_goldens.py from tinygrad a9069c17 test/null/test_schedule.py"],
             cases, write_case)
print(f"{len(cases)} kernel-count checks from {len({c['test'] for c in cases})} tests -> {OUT}")
