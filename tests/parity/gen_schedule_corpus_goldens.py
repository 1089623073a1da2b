#!/usr/bin/env python3
# Regenerates tests/data/schedule_corpus_goldens.txt: every schedule (create_linear_with_vars call) the reference's own
# unit tests make, with the LINEAR it returned (or the error it raised). Distinct (big SINK, scheduler settings) only.
#
#   cd <tinygrad a9069c17> && python3 <repo>/tests/parity/gen_schedule_corpus_goldens.py <repo>/tests/data/schedule_corpus_goldens.txt
# (DEV=CPU; numpy is not installed, so a stub stands in: tests that need it stop there, after their schedules ran.)
#
# File format (per-case node pool as in schedule_goldens.txt):
#   case <id> <unittest id> <n-th schedule of the test>
#   ctx <VAR=value ...>     the scheduler's ContextVars
#   big_sink @i
#   linear @j | error <message>
#   captured @k             under TinyJit capture: the LINEAR capturing[0].add_linear received
#   var <name> <value>
#   rangeify_debug <n>      + n lines: run_rangeify's DEBUG_RANGEIFY=1 report (ESC written as \x1b)
import os, sys, io, contextlib, importlib
os.environ["DEV"] = "CPU"
os.environ["SCACHE"] = "0"  # every call schedules (a cache hit would skip run_rangeify and its report)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_gen import out_path, err_text, write_pooled, write_block, stub_numpy, run_unittests, context_vars, TestCounter
stub_numpy()
from tinygrad.helpers import Context
import tinygrad.tensor as T
import tinygrad.engine.realize as ER
from tinygrad.helpers import CAPTURING

MODULES = ["test.unit.test_assign", "test.unit.test_setitem_schedule", "test.unit.test_symbolic_tensor",
           "test.unit.test_indexing", "test.unit.test_getitem_ops", "test.unit.test_schedule_cache", "test.unit.test_masked_tensor",
           "test.unit.test_conv", "test.unit.test_linalg", "test.unit.test_invalid_tensor", "test.unit.test_dtype_weak",
           "test.unit.test_gradient", "test.unit.test_attention", "test.unit.test_randomness", "test.unit.test_rearrange_einops",
           "test.unit.test_winograd", "test.unit.test_realize_is_realize", "test.unit.test_callify", "test.unit.test_tensor_data",
           "test.unit.test_function", "test.unit.test_call", "test.unit.test_jit_footguns", "test.null.test_schedule",
           "test.null.test_indexing", "test.null.test_const_folding", "test.null.test_gc"]
SCHED_VARS = {"SPLIT_REDUCEOP", "PCONTIG", "MAX_KERNEL_BUFFERS", "NO_MEMORY_PLANNER", "FLOAT16", "OPENPILOT_HACKS", "IMAGE"}
MAX_REPORT = 120  # DEBUG_RANGEIFY lines kept per schedule
MAX_NODES = 1000  # keep the file small: skip giant sinks (test_linalg's SVDs)

OUT = out_path("schedule_corpus_goldens.txt")
cases, seen = [], set()
tests = TestCounter()
orig_clwv = T.create_linear_with_vars
def create_linear_with_vars(big_sink):
  ctx = context_vars(SCHED_VARS)
  n = tests.next()
  key = (big_sink.key, ctx)
  record = key not in seen and len(big_sink.toposort()) <= MAX_NODES
  seen.add(key)
  c = {"test": tests.test, "n": n, "ctx": ctx, "big_sink": big_sink}
  # under TinyJit capture the schedule goes to capturing[0].add_linear and an empty LINEAR comes back: record both
  cap = ER.capturing[0] if len(ER.capturing) and CAPTURING else None
  if cap is not None:
    orig_add = cap.add_linear
    def add_linear(linear, var_vals):
      c["captured"] = linear
      return orig_add(linear, var_vals)
    cap.add_linear = add_linear
  try:
    # DEBUG_RANGEIFY=1: run_rangeify's report of every node's ranges (recorded, not shown)
    buf = io.StringIO()
    with Context(DEBUG_RANGEIFY=1), contextlib.redirect_stdout(buf):
      try: ret = orig_clwv(big_sink)
      finally: c["rangeify_debug"] = buf.getvalue()
    c["linear"], c["var_vals"] = ret
    return ret
  except Exception as e:
    c["error"] = err_text(e, 200)
    raise
  finally:
    if cap is not None: del cap.add_linear
    if record: cases.append(c)
T.create_linear_with_vars = create_linear_with_vars

def start_test(test_id): tests.test = test_id.replace("test.unit.", "").replace("test.null.", "")

for m in MODULES:
  try: mod = importlib.import_module(m)
  except Exception as e:
    print(f"{m}: cannot import ({type(e).__name__}: {e})"); continue
  before = len(cases)
  res = run_unittests(mod, start_test)
  print(f"{m}: {res.testsRun} tests ({len(res.failures)} failures, {len(res.errors)} errors), {len(cases)-before} schedules")

def write_case(w, ref, cid, c):
  w(f"case {cid} {c['test']} {c['n']}")
  w(f"ctx {c['ctx']}")
  w(f"big_sink {ref(c['big_sink'])}")
  if "error" in c: w(f"error {c['error']}")
  else:
    w(f"linear {ref(c['linear'])}")
    if "captured" in c: w(f"captured {ref(c['captured'])}")
    for k, v in c["var_vals"].items(): w(f"var {k} {v}")
  dbg = c.get("rangeify_debug", "").replace("\x1b", "\\x1b").splitlines()
  if len(dbg) > MAX_REPORT: dbg = []  # size: long reports are left out (0 lines = not compared)
  write_block(w, "rangeify_debug", dbg)
write_pooled(OUT, ["# written by tests/parity/gen_schedule_corpus_goldens.py from tinygrad a9069c17's unit tests"], cases, write_case)
print(f"{len(cases)} distinct schedules ({sum('error' in c for c in cases)} errors) -> {OUT}")
