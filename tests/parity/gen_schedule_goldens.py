#!/usr/bin/env python3
# Regenerates tests/data/schedule_goldens.txt: what the reference's scheduler (schedule/__init__.py
# create_linear_with_vars) does with the big SINK of ~80 small tensor programs on the CPU device.
#
# Run from a checkout of tinygrad a9069c17:
#   cd <tinygrad> && python3 <repo>/tests/parity/gen_schedule_goldens.py <repo>/tests/data/schedule_goldens.txt
# (it sets DEV=CPU, TRACK_MATCH_STATS=2, SCACHE=0 so every schedule is computed, not served from the cache)
#
# Capture: tensor.py calls create_linear_with_vars(big_sink) once per realize; we wrap that reference and record the
# input big_sink, the kernel graph get_kernel_graph returned (one per scheduled function), the LINEAR that
# memory_plan_rewrite received (before planning), the final LINEAR (after planning) and var_vals. graph_rewrite is
# wrapped at its root (the cell rewrite_group decorates, as in gen_codegen_goldens.py) to record every tracked
# graph_rewrite inside create_linear_with_vars: "<depth> <flags> <name>"; get_kernel_graph and run_rangeify are
# rewrite_group(new_ctx=False) functions, which the tracker records as steps too.
#
# File format (graphs go to a per-case node pool: "+ <uop_codec node line>" appends one node; "@i" is a pool index):
#   case <id> <program name> <n-th schedule of the program>
#   ctx <VAR=value ...>     the scheduler's ContextVars (SPLIT_REDUCEOP, PCONTIG, ...) when it ran
#   context <name>          the trace context ("Schedule 3 Kernels")
#   big_sink @i
#   kernel_graph @i         (one line per get_kernel_graph call)
#   linear_unplanned @i
#   linear @i
#   var <name> <value>      (one line per var_vals entry)
#   rangeify_debug <n>      + n lines: what run_rangeify prints with DEBUG_RANGEIFY=1 (ESC written as \x1b)
#   steps <n>               + n lines "<depth> <flags> <name>"
#   step_out <i> @j         the graph the i-th step returned
#   error <message>         the reference raised; nothing but steps follow
import os, sys, io, contextlib
os.environ["DEV"] = "CPU"
os.environ["TRACK_MATCH_STATS"] = "2"
os.environ["PRINT_MATCH_STATS"] = "0"
os.environ["SCACHE"] = "0"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_gen import out_path, err_text, write_pooled, write_block, StepRecorder, context_vars
from tinygrad import Tensor, Variable, dtypes
from tinygrad.helpers import pluralize
from tinygrad.uop.ops import UOp
import tinygrad.tensor as T
import tinygrad.schedule as S

OUT = out_path("schedule_goldens.txt")
rec = StepRecorder()

# ***** capture *****
from tinygrad.helpers import Context
# the settings the scheduler reads, written per case (some programs set them)
SCHED_VARS = {"SPLIT_REDUCEOP", "PCONTIG", "MAX_KERNEL_BUFFERS", "NO_MEMORY_PLANNER", "FLOAT16", "OPENPILOT_HACKS"}
cases: list[dict] = []
current = {"prog": "?", "n": 0}
orig_clwv, orig_gkg, orig_mpr = S.create_linear_with_vars, S.get_kernel_graph, S.memory_plan_rewrite
# get_kernel_graph and run_rangeify are rewrite_group(new_ctx=False): the tracker shows each as a step of its own
as_step = rec.step
import tinygrad.schedule.rangeify as RF
orig_run_rangeify = RF.run_rangeify
RF.run_rangeify = lambda tsink, debug=False: as_step("run_rangeify", orig_run_rangeify, tsink, debug)
def get_kernel_graph(sink):
  ret = as_step("get_kernel_graph", orig_gkg, sink)
  cases[-1]["kernel_graphs"].append(ret)
  return ret
def memory_plan_rewrite(linear, held_bufs=None):
  cases[-1]["unplanned"] = linear
  return orig_mpr(linear, held_bufs)
S.get_kernel_graph, S.memory_plan_rewrite = get_kernel_graph, memory_plan_rewrite
def create_linear_with_vars(big_sink):
  c = {"prog": current["prog"], "n": current["n"], "big_sink": big_sink, "kernel_graphs": [], "unplanned": None,
       "ctx": context_vars(SCHED_VARS)}
  current["n"] += 1
  cases.append(c)
  rec.start(1)  # the context itself is depth 0 in the tracker; steps start at 1
  try:
    # DEBUG_RANGEIFY=1: run_rangeify prints every node's ranges (what is realized, the ranges in and out)
    buf = io.StringIO()
    with Context(DEBUG_RANGEIFY=1), contextlib.redirect_stdout(buf):
      try: linear, var_vals = orig_clwv(big_sink)
      finally: c["rangeify_debug"] = buf.getvalue()
    c.update(linear=linear, var_vals=var_vals, context=f"Schedule {pluralize('Kernel', len(linear.src))}")
    return linear, var_vals
  except Exception as e:
    c["error"] = err_text(e, 200)
    raise
  finally:
    rec.on = False
    c["steps"], c["outs"] = rec.steps, [call[3] for call in rec.calls]
T.create_linear_with_vars = create_linear_with_vars

# ***** the programs *****
PROGS: list = []
def prog(fn): PROGS.append(fn); return fn
def E(*shape, dtype=dtypes.float): return Tensor.empty(*shape, dtype=dtype)
def R(*ts): Tensor.realize(*ts)

@prog
def add(): R(E(4)+E(4))
@prog
def add_const(): R(E(4)+1)
@prog
def elementwise_chain(): R(((E(16)+1)*E(16)).exp2().sqrt()-3)
@prog
def where_cmp(): a = E(8); R((a < 2).where(a, a*2))
@prog
def broadcast_row(): R(E(4, 5)+E(1, 5))
@prog
def broadcast_col(): R(E(4, 5)*E(4, 1))
@prog
def broadcast_3d(): R(E(2, 1, 3)+E(1, 4, 1))
@prog
def sum_all(): R(E(16).sum())
@prog
def sum_axis0(): R(E(4, 5).sum(0))
@prog
def sum_axis1(): R(E(4, 5).sum(1))
@prog
def sum_axis_3d_mid(): R(E(3, 4, 5).sum(1))
@prog
def sum_keepdim(): R(E(3, 4, 5).sum(axis=(0, 2), keepdim=True))
@prog
def max_axis(): R(E(6, 7).max(1))
@prog
def mean(): R(E(10, 3).mean(0))
@prog
def reduce_then_add(): a = E(4, 5); R(a.sum(1, keepdim=True)+a)
@prog
def two_reduces(): a = E(8, 8); R(a.sum(0)+a.max(1))
@prog
def big_sum_split(): R(E(65536).sum())
@prog
def big_sum_2d(): R(E(512, 512).sum(1))
@prog
def matmul_square(): R(E(8, 8)@E(8, 8))
@prog
def matmul_odd(): R(E(3, 5)@E(5, 7))
@prog
def matmul_vec(): R(E(13)@E(13, 11))
@prog
def matmul_batched(): R(E(2, 3, 4)@E(2, 4, 5))
@prog
def matmul_relu(): R((E(9, 17)@E(17, 3)).relu())
@prog
def linear_bias(): R(E(4, 6).linear(E(6, 3), E(3)))
@prog
def pad(): R(E(3, 3).pad(((1, 1), (2, 0))))
@prog
def pad_add(): R(E(3, 3).pad(((1, 1), (1, 1)))+1)
@prog
def shrink(): R(E(6, 6)[1:4, 2:5]+1)
@prog
def shrink_contig(): R(E(6, 6)[1:4, 2:5].contiguous())
@prog
def flip(): R(E(5).flip(0)+1)
@prog
def permute(): R(E(3, 4).permute(1, 0)+1)
@prog
def permute_contig(): R(E(2, 3, 4).permute(2, 0, 1).contiguous())
@prog
def reshape(): R(E(12).reshape(3, 4)+1)
@prog
def expand(): R(E(3, 1).expand(3, 4)+1)
@prog
def transpose_sum(): R(E(4, 6).T.sum(1))
@prog
def pad_reduce(): R(E(4, 4).pad(((1, 1), (1, 1))).sum(0))
@prog
def flip_reduce(): R(E(4, 4).flip(1).sum(1))
@prog
def getitem_int(): R(E(5, 5)[2])
@prog
def getitem_step(): R(E(10)[::2]+1)
@prog
def getitem_neg_step(): R(E(10)[::-3]+1)
@prog
def tensor_index(): R(E(10)[Tensor.arange(4)])
@prog
def tensor_index_2d(): R(E(6, 5)[Tensor.arange(3)*2])
@prog
def gather(): R(E(4, 6).gather(1, Tensor.arange(4).reshape(4, 1).expand(4, 2)))
@prog
def arange(): R(Tensor.arange(10))
@prog
def arange_sum(): R(Tensor.arange(10).sum())
@prog
def eye(): R(Tensor.eye(4))
@prog
def one_hot(): R(Tensor.arange(5).one_hot(5))
@prog
def softmax(): R(E(4, 10).softmax(-1))
@prog
def log_softmax(): R(E(4, 10).log_softmax(-1))
@prog
def softmax_axis0(): R(E(6, 3).softmax(0))
@prog
def layernorm(): R(E(4, 8).layernorm())
@prog
def cat(): R(E(3, 2).cat(E(4, 2), dim=0))
@prog
def cat_dim1(): R(E(3, 2).cat(E(3, 5), dim=1))
@prog
def stack(): R(E(3).stack(E(3), E(3)))
@prog
def cast_half(): R(E(8).cast(dtypes.half))
@prog
def cast_int(): R(E(8).cast(dtypes.int32)+1)
@prog
def bitcast(): R(E(8).bitcast(dtypes.int32))
@prog
def cast_sum(): R(E(8, dtype=dtypes.half).cast(dtypes.float).sum())
@prog
def int_ops(): a = E(8, dtype=dtypes.int32); R((a//3)+(a % 5))
@prog
def bool_ops(): a = E(8); R(((a > 1) & (a < 5)).cast(dtypes.int32))
@prog
def contiguous(): R((E(4)+1).contiguous()*2)
@prog
def contiguous_twice(): a = (E(4, 4)+1).contiguous(); R((a.sum(0)+a.sum(1)))
@prog
def assign():
  a = E(4).realize(); a.assign(a+1); R(a)
@prog
def assign_other():
  a = E(4).realize(); b = E(4).realize(); a.assign(b*2); R(a)
@prog
def setitem():
  a = Tensor.zeros(8).contiguous().realize(); a[2:5] = 3.0; R(a)
@prog
def setitem_tensor():
  a = Tensor.zeros(4, 4).contiguous().realize(); a[1] = E(4); R(a)
@prog
def copy_from_python(): R(Tensor([1.0, 2.0, 3.0]))
@prog
def copy_then_add(): R(Tensor([1.0, 2.0, 3.0, 4.0]).realize()+1)
@prog
def multi_output(): a = E(4); R(a+1, a*2)
@prog
def multi_output_reduce(): a = E(4, 4); R(a.sum(0), a.sum(1), a+1)
@prog
def shared_input(): a = E(8)+1; R(a*a)
@prog
def diamond(): a = (E(8)+1).contiguous(); R(a.sum()+a.max())
@prog
def chain_of_kernels(): a = E(16); R(((a.sum()+a).sum()*a).sum())
@prog
def mlp_small():
  x = E(8, 16); w1 = E(16, 32); w2 = E(32, 4)
  R((x@w1).relu()@w2)
@prog
def mlp_softmax():
  x = E(8, 16); w1 = E(16, 32); w2 = E(32, 10)
  R(((x@w1).relu()@w2).log_softmax(-1))
@prog
def conv2d(): R(E(1, 2, 6, 6).conv2d(E(3, 2, 3, 3)))
@prog
def avg_pool(): R(E(1, 1, 4, 4).avg_pool2d())
@prog
def max_pool(): R(E(1, 1, 4, 4).max_pool2d())
@prog
def cumsum(): R(E(8).cumsum())
@prog
def argmax(): R(E(4, 6).argmax(1))
@prog
def var_std(): a = E(5, 7); R(a.var(1), a.std(0))
@prog
def symbolic_shrink():
  v = Variable("i", 1, 10).bind(3)
  R(E(10)[:v]+1)
@prog
def symbolic_sum():
  v = Variable("i", 1, 10).bind(4)
  R(E(10, 4)[:v].sum(0))
@prog
def symbolic_rebind():  # one function, three bound values: the schedule cache serves the 2nd and 3rd
  a = E(10, 4)
  for val in (3, 4, 5):
    v = Variable("i", 1, 10).bind(val)
    R(a[:v].sum(0)+1, (a[:v]*2).contiguous())
@prog
def zeros(): R(Tensor.zeros(4, 4).contiguous())
@prog
def full_add(): R(Tensor.full((3, 3), 2.0)+E(3, 3))
@prog
def rand_like(): R(E(4)*0+Tensor.ones(4))
@prog
def size_zero(): R(E(0)+1)
@prog
def where_three(): R((E(6) > 0).where(E(6), E(6)))
@prog
def exp_log(): R(E(6).exp().log())
@prog
def sin_cos(): R(E(6).sin()+E(6).cos())
@prog
def many_inputs(): R(sum([E(4) for _ in range(40)], Tensor.zeros(4)))
@prog
def reduce_permuted(): R(E(3, 4, 5).permute(2, 0, 1).sum(2))
@prog
def expand_reduce(): R(E(4, 1).expand(4, 8).sum(1))
@prog
def double_transpose_matmul(): a = E(6, 5); R(a.T@a)

# the MLP of the benchmark: 784-512-512-10 forward at batch 512
@prog
def mlp_784_512_512_10():
  x = E(512, 784); w1 = E(784, 512); b1 = E(512); w2 = E(512, 512); b2 = E(512); w3 = E(512, 10); b3 = E(10)
  R((x.linear(w1, b1).relu().linear(w2, b2).relu().linear(w3, b3)).log_softmax(-1))

# from the reference's test/null/test_schedule.py
@prog
def reduce_expand_child():
  a = E(32, 32, 32); b = E(1, 16)
  R(a.sum()+2, a.sum()+b)
@prog
def conv2d_backward():
  img = E(2, 3, 16, 16); w = E(4, 3, 3, 3)
  img.requires_grad = w.requires_grad = True
  ret = img.conv2d(w).relu().mean().backward()
  R(ret, img.grad, w.grad)

# the same with SPLIT_REDUCEOP=0 (test_schedule.py's TestSchedule runs so), and other scheduler settings
@prog
def reduce_expand_child_nosplit():
  with Context(SPLIT_REDUCEOP=0): reduce_expand_child()
@prog
def conv2d_backward_nosplit():
  with Context(SPLIT_REDUCEOP=0): conv2d_backward()
@prog
def big_sum_nosplit():
  with Context(SPLIT_REDUCEOP=0): R(E(65536).sum())
@prog
def no_memory_planner():
  with Context(NO_MEMORY_PLANNER=1): diamond()
@prog
def max_kernel_buffers():
  with Context(MAX_KERNEL_BUFFERS=8): R(sum([E(4) for _ in range(12)], Tensor.zeros(4)))

# tinygrad.function: FUNCTION calls (inlined by earliest_rewrites, or scheduled on their own when precompiled)
from tinygrad.function import function
@function
def _fma_sum(a, b): return (a*b+1).sum(1)
@function
def _two_outs(a, b): return a+b, (a*b).max(0)
@function(precompile=True)
def _pre(a, b): return (a+b).exp2()
@prog
def function_call(): R(_fma_sum(E(4, 5), E(4, 5)))
@prog
def function_tuple():
  x, y = _two_outs(E(3, 3), E(3, 3))
  R(x, y)
@prog
def function_twice(): a = E(4, 5); R(_fma_sum(a, a*2) + _fma_sum(a+1, a))
@prog
def function_precompile(): R(_pre(E(8), E(8)) + 1)

# partial contiguous (PCONTIG=2: merge ranges of consumers that agree, PCONTIG=3: LOCAL partial buffers)
for _pc in (2, 3):
  for _fn in (softmax, layernorm, matmul_relu, conv2d, mlp_softmax, reduce_then_add, pad_reduce, avg_pool, cumsum):
    def _wrapped(_fn=_fn, _pc=_pc):
      with Context(PCONTIG=_pc): _fn()
    _wrapped.__name__ = f"{_fn.__name__}_pcontig{_pc}"
    prog(_wrapped)

# schedules the reference refuses (test/unit/test_assign.py: "cycle")
@prog
def assign_diamond_cycle():
  a = Tensor.ones(4).contiguous().realize()
  times_a = a*3
  a.assign(Tensor.full((4,), 2.).contiguous())
  R(a + (times_a-1))
@prog
def assign_diamond_contiguous_cycle():
  a = Tensor.ones(4).contiguous().realize()
  times_a = a*3
  a.assign(Tensor.full((4,), 2.))
  R(a.contiguous() + times_a-1)
@prog
def crossunder_assign():
  a = Tensor.full((4,), 2).contiguous().realize()
  b = Tensor.full((4,), 3).contiguous().realize()
  c = a+9
  a += b
  b += c
  R(a, b)

for fn in PROGS:
  current.update(prog=fn.__name__, n=0)
  try: fn()
  except Exception as e: print(f"{fn.__name__}: {type(e).__name__}: {e}")

# ***** write *****
def write_case(w, ref, cid, c):
  w(f"case {cid} {c['prog']} {c['n']}")
  w(f"ctx {c['ctx']}")
  w(f"big_sink {ref(c['big_sink'])}")
  if "error" in c:
    w(f"error {c['error']}")
  else:
    w(f"context {c['context']}")
    for kg in c["kernel_graphs"]: w(f"kernel_graph {ref(kg)}")
    if c["unplanned"] is not None: w(f"linear_unplanned {ref(c['unplanned'])}")
    w(f"linear {ref(c['linear'])}")
    for k, v in c["var_vals"].items(): w(f"var {k} {v}")
  # the graph each step returned (after the step list, so the node pool is complete when read)
  outs = [(i, ref(o)) for i, o in enumerate(c["outs"]) if o is not None]
  write_block(w, "rangeify_debug", c.get("rangeify_debug", "").replace("\x1b", "\\x1b").splitlines())
  write_block(w, "steps", c["steps"])
  for i, r in outs: w(f"step_out {i} {r}")
write_pooled(OUT, ["# written by tests/parity/gen_schedule_goldens.py from tinygrad a9069c17; format described there"], cases,
             write_case)
print(f"{len(PROGS)} programs, {len(cases)} schedules, {sum('error' in c for c in cases)} errors -> {OUT}")
