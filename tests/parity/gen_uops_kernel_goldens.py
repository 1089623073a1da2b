#!/usr/bin/env python3
# Regenerates tests/data/uops_kernel_goldens.txt: the hand-built UOp programs of the reference's
# test/backend/test_uops.py and test/null/test_uops.py (the ones that reach the late stage on the CPU device), lowered by
# the reference and run there, for tests/unit/test_late_uops.cpp, which transcribes the assertions.
#
# Run from a checkout of tinygrad a9069c17 (clang must be installed):
#   cd <tinygrad> && DEV=CPU PARALLEL=0 python3 <repo>/tests/parity/gen_uops_kernel_goldens.py > <repo>/tests/data/uops_kernel_goldens.txt
#
# The reference's test files import numpy, which is not installed, so this script builds the same UOps the tests build
# (the `uop`/_test_single_value/_test_single_value_const/_test_uops_result helpers of test/backend/test_uops.py, the
# same operand loops, buffers filled with struct instead of numpy) and runs them the way the tests do (run_linear of a
# CALL of the SINK). Every kernel execution is captured at engine.realize's exec_kernel: PROGRAM.src[1] is the linear
# program the compiled kernel came from; the buffers before and after the run are the inputs and the reference's result.
# The gated-store tests of test/null/test_uops.py only look at the linear program of to_uops_list: for them the full
# SINK (full_rewrite_to_sink with the base Renderer, as test.helpers.full_rewrite does) and the list are recorded.
#
# Format:
#   case <Class.test> <k> <operands (encoded args, see uop_codec.py), '|'-separated>   one kernel execution of a test
#     program <n>     + n lines: LINEAR(*uops) that ran (uop_codec.py encoding)
#     vals <v...>     Variable values ('-' = core_id)
#     global <g0> <g1> <g2>
#     local <l0> <l1> <l2>     (devices with local sizes: the same programs lowered for DEV=CL, uops_kernel_goldens_cl.txt,
#                              for tests/parity/test_cl_goldens.cpp:
#                              cd <tinygrad> && DEV=CL PARALLEL=0 python3 <repo>/tests/parity/gen_uops_kernel_goldens.py)
#     buf <dtype attr> <count> <hex before> <hex after>   one per global buffer, slot order
#   linear <Class.test> <k>                                a to_uops_list/get_uops result, or a hand-built program
#     sink <n> / program <n> / source <n> / llvm_source <n>  full SINK, the list, ClangRenderer / CPULLVMRenderer output
#     run <global x3> <local x3>, vals, buf ...            the PYTHON device's run of the list on the given inputs
#   pysort <kind> <n> <values>, perm <indices>             python's sorted(range(n), key=values.__getitem__)
import os, sys, struct, math, random, itertools
os.environ.setdefault("DEV", "CPU")
os.environ.setdefault("PARALLEL", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
from uop_codec import enc_graph, enc_arg, dtype_attr
from tinygrad import Tensor, Device, dtypes
from tinygrad.device import Buffer
from tinygrad.dtype import AddrSpace
from tinygrad.helpers import Target
from tinygrad.renderer import Renderer
from tinygrad.uop.ops import UOp, Ops, KernelInfo, AxisType, buffers, PatternMatcher, UPat
import tinygrad.engine.realize as R
import tinygrad.codegen as C
from tinygrad.codegen.late.linearizer import linearize

# the device the programs run on: CPU, or DEV's (DEV=CL: lowered by the OpenCLRenderer and run on the OpenCL device)
dev = Device[os.environ["DEV"].split(":")[0]]
out: list[str] = []
current = {"test": "?", "k": 0, "operands": ""}

def emit_graph(key, lines):
  out.append(f"{key} {len(lines)}")
  out.extend(lines)

orig_exec = R.exec_kernel
def exec_kernel(ctx, call, ast):
  resolved = R.resolve_params(call, ctx.input_uops)
  bufs = [resolved[i].buffer.ensure_allocated() for i in ast.arg.globals]
  before = [bytes(b.as_memoryview()) for b in bufs]
  ret = orig_exec(ctx, call, ast)
  after = [bytes(b.as_memoryview()) for b in bufs]
  current["k"] += 1
  out.append(f"case {current['test']} {current['k']} {current['operands']}")
  emit_graph("program", enc_graph(ast.src[1]))
  out.append("vals" + "".join(" -" if v is None else f" {v}" for v in ast.arg.vals(ctx.var_vals)))
  out.append("global " + " ".join(str(x) for x in ast.arg.global_size))
  if ast.arg.local_size is not None and os.environ["DEV"] != "CPU": out.append("local " + " ".join(str(x) for x in ast.arg.local_size))
  for b, x, y in zip(bufs, before, after): out.append(f"buf {dtype_attr(b.dtype)} {b.size} {x.hex() or '-'} {y.hex() or '-'}")
  return ret
R.pm_exec = PatternMatcher([(UPat(Ops.CALL, src=(UPat(Ops.PROGRAM, name="ast"),), name="call", allow_any_len=True), exec_kernel)]) + R.pm_exec

def start(test, operands=()):
  if current["test"] != test: current["test"], current["k"] = test, 0
  current["operands"] = "|".join(enc_arg(x) for x in operands)

# ***** test/backend/test_uops.py helpers, without numpy *****
def pack(vals, dt): return struct.pack(f"{len(vals)}{dt.fmt}", *vals)

def run_uops(uops_list, bufs):
  buf_uops = [UOp.new_buffer(b.device, b.size, b.dtype) for b in bufs]
  for u, b in zip(buf_uops, bufs): buffers[u] = b
  R.run_linear(UOp(Ops.LINEAR, src=(UOp.sink(*uops_list, arg=KernelInfo()).call(*buf_uops),)))

def uop(uops, op, dtype, src, arg=None):
  if op is Ops.CONST: uops.append(UOp.const(arg).cast(dtype))
  elif op is Ops.PARAM: uops.append(UOp.param(arg, dtype, shape=(1,)))
  else: uops.append(UOp(op, dtype, tuple(src), arg))
  return uops[-1]

def out_dtype(op, dts): return dtypes.bool if op in (Ops.CMPLT, Ops.CMPNE) else dts[-1]

def single_value(vals, op, dts):
  uops = []
  odt = out_dtype(op, dts)
  buf_store = uop(uops, Ops.PARAM, odt, (), 0)
  buf_loads = [uop(uops, Ops.PARAM, dtype, (), i+1) for i, dtype in enumerate(dts)]
  loads = (buf_loads[i].index(uop(uops, Ops.CONST, dtypes.int32, (), 0)) for i, dtype in enumerate(dts))
  alu = uop(uops, op, odt, loads)
  st = uop(uops, Ops.STORE, dtypes.void, (buf_store.index(uop(uops, Ops.CONST, dtypes.int32, (), 0)), alu))
  buf = Buffer(dev.device, 1, odt).allocate()
  buf2 = [Buffer(dev.device, 1, dtype, initial_value=pack([a], dtype)) for a, dtype in zip(vals, dts)]
  run_uops([st], [buf]+buf2)

def single_value_const(vals, op, dts):
  uops = []
  odt = out_dtype(op, dts)
  buf_store = uop(uops, Ops.PARAM, odt, (), 0)
  loads = (uop(uops, Ops.CONST, dtype, [], a) for a, dtype in zip(vals, dts))
  alu = uop(uops, op, odt, loads)
  st = buf_store[UOp.const(0).cast(dtypes.int32)].store(alu)
  run_uops([st], [Buffer(dev.device, 1, odt).allocate()])

def uops_result(output_dtype, uops, res):
  buf_store = uop(uops, Ops.PARAM, output_dtype, (), 0)
  st = uop(uops, Ops.STORE, dtypes.void, (buf_store.index(uop(uops, Ops.CONST, dtypes.int32, (), 0)), res))
  run_uops([st], [Buffer(dev.device, 1, output_dtype).allocate()])

# the operand loops of TestUOps._test_uop_fxn / _test_bop_fxn / _test_top_fxn and TestBoolUOps: every combination of
# the operands' values (the first operand outermost), each made its dtype's const (not the bools), run as loads and
# then as consts
def operand_loops(test, op, dts, *values, as_const=True):
  for f in (single_value, single_value_const):
    for vals in itertools.product(*values):
      if as_const: vals = tuple(dt.const(v) for dt, v in zip(dts, vals))
      start(test, vals); f(list(vals), op, dts)

def uop_fxn(test, op, dts=(dtypes.float32,)): operand_loops(test, op, dts, [-2.0, 0.0, 1.0])
def bop_fxn(test, op, dts=(dtypes.float32,)*2, no_b_zero=False, no_b_neg=False, no_a_neg=False):
  bs = [abs(b) if no_b_neg else b for b in [-3.0, 1.0] + ([] if no_b_zero else [0.0])]
  operand_loops(test, op, dts, [abs(a) if no_a_neg else a for a in [-2.0, 0.0, 1.0]], bs)
def top_fxn(test, op, dts=(dtypes.float32,)*3): operand_loops(test, op, dts, [-2.0, 0, 1], [-3.0, 3.0], [-4.0, 4.0])
def bop_bool(test, op): operand_loops(test, op, (dtypes.bool,)*2, [False, True], [False, True], as_const=False)
def top_bool(test, op): operand_loops(test, op, (dtypes.bool,)*3, [False, True], [False, True], [False, True], as_const=False)

# TestFloatUOps (exp2/log2/sin are skipped on CPU: 'not supported as uop'; mulacc is PYTHON only)
uop_fxn("TestFloatUOps.test_recip", Ops.RECIPROCAL)
uop_fxn("TestFloatUOps.test_sqrt", Ops.SQRT)
bop_fxn("TestFloatUOps.test_add", Ops.ADD)
bop_fxn("TestFloatUOps.test_mul", Ops.MUL)
bop_fxn("TestFloatUOps.test_max", Ops.MAX)
bop_fxn("TestFloatUOps.test_cmplt", Ops.CMPLT)
bop_fxn("TestFloatUOps.test_cmpne", Ops.CMPNE)
for a, b in [(math.nan, 1.0), (1.0, math.nan), (math.nan, math.nan)]:
  a, b = dtypes.float32.const(a), dtypes.float32.const(b)
  start("TestFloatUOps.test_cmpne_nan", (a, b)); single_value([a, b], Ops.CMPNE, (dtypes.float32, dtypes.float32))
top_fxn("TestFloatUOps.test_where", Ops.WHERE, (dtypes.bool, dtypes.float, dtypes.float))
# TestNonFloatUOps
i32 = (dtypes.int32, dtypes.int32)
bop_fxn("TestNonFloatUOps.test_add_int32", Ops.ADD, i32)
bop_fxn("TestNonFloatUOps.test_mul_int32", Ops.MUL, i32)
bop_fxn("TestNonFloatUOps.test_shr_int32", Ops.SHR, i32, no_b_neg=True)
# the reference's test shifts -2 left, which C leaves undefined (what its clang build gave is no golden): 2 instead
bop_fxn("TestNonFloatUOps.test_shl_int32", Ops.SHL, i32, no_b_neg=True, no_a_neg=True)
bop_fxn("TestNonFloatUOps.test_div_int32", Ops.CDIV, i32, no_b_zero=True)
bop_fxn("TestNonFloatUOps.test_and_int32", Ops.AND, i32)
bop_fxn("TestNonFloatUOps.test_or_int32", Ops.OR, i32)
bop_fxn("TestNonFloatUOps.test_mod_int32", Ops.CMOD, i32, no_b_zero=True)
bop_fxn("TestNonFloatUOps.test_cmplt_int32", Ops.CMPLT, i32)
bop_fxn("TestNonFloatUOps.test_cmpne_int32", Ops.CMPNE, i32)
bop_fxn("TestNonFloatUOps.test_mul_bool", Ops.MUL, (dtypes.bool, dtypes.bool))
top_fxn("TestNonFloatUOps.test_where_float16", Ops.WHERE, (dtypes.bool, dtypes.float16, dtypes.float16))
# TestBoolUOps
bop_bool("TestBoolUOps.test_add_bool", Ops.ADD)
bop_bool("TestBoolUOps.test_mul_bool", Ops.MUL)
bop_bool("TestBoolUOps.test_xor_bool", Ops.XOR)
bop_bool("TestBoolUOps.test_and_bool", Ops.AND)
bop_bool("TestBoolUOps.test_or_bool", Ops.OR)
bop_bool("TestBoolUOps.test_cmpne_bool", Ops.CMPNE)
bop_bool("TestBoolUOps.test_cmplt_bool", Ops.CMPLT)
top_bool("TestBoolUOps.test_where_bool", Ops.WHERE)

# TestLocalAccess.test_local_basic
start("TestLocalAccess.test_local_basic")
uops = []
smem = UOp.placeholder((16,), dtypes.float32, slot=0, addrspace=AddrSpace.LOCAL)
uops.append(smem)
st = uop(uops, Ops.STORE, dtypes.void, (smem.index(uop(uops, Ops.CONST, dtypes.int32, (), 0)), uop(uops, Ops.CONST, dtypes.float32, (), 42.0)))
barr = uop(uops, Ops.BARRIER, dtypes.void, (st,))
sres = uop(uops, Ops.LOAD, dtypes.float32, (smem.after(barr).index(uop(uops, Ops.CONST, dtypes.int32, (), 0)),))
uops_result(dtypes.float32, uops, sres)

# TestBitcastBufferView (SPEC=2 in the reference)
start("TestBitcastBufferView.test_load")
src, obuf_u = UOp.param(0, dtypes.uint32, (4,)), UOp.param(1, dtypes.uint64, (1,))
ibuf = Buffer(dev.device, 4, dtypes.uint32, initial_value=pack([0, 0x55667788, 0x11223344, 0], dtypes.uint32))
obuf = Buffer(dev.device, 1, dtypes.uint64).allocate()
run_uops([obuf_u.index(0).store(src.shrink(((1, 3),)).bitcast(dtypes.uint64).index(0))], [ibuf, obuf])
start("TestBitcastBufferView.test_store")
val = 0x1122334455667788
dst = UOp.param(0, dtypes.uint32, (6,))
view = dst.shrink(((1, 5),)).bitcast(dtypes.uint64)
run_uops([view.index(0).store(val ^ 0xff), view.index(1).store(val)], [Buffer(dev.device, 6, dtypes.uint32, initial_value=bytes(24))])

# TestZeroRange.test_reduce_variable
for i in range(3, -1, -1):
  start("TestZeroRange.test_reduce_variable", (i,))
  v = UOp.variable("i", 0, 5).bind(i)
  Tensor.ones(10, dtype=dtypes.int).contiguous().shrink(((0, v),)).sum().item()

# TestUOpPrograms (inputs from a seeded python RNG instead of Tensor.randn)
rng = random.Random(7)
def rand_tensor(*shape): return Tensor([rng.gauss(0, 1) for _ in range(math.prod(shape))]).reshape(*shape).realize()
def run_prog(prog, *tensors):
  R.run_linear(UOp(Ops.LINEAR, src=(prog.call(*[t.uop.buf_uop for t in tensors]),)), update_stats=False)

start("TestUOpPrograms.test_simple")
o = Tensor.empty(10, 10, dtype=dtypes.int).realize()
ptr = UOp.placeholder(o.shape, o.dtype, slot=0)
i, j = UOp.range(10, axis_id=0), UOp.range(10, axis_id=1)
run_prog(ptr[i, j].set(42).end(i, j).sink(arg=KernelInfo()), o)

start("TestUOpPrograms.test_matmul")
a, b, c = rand_tensor(10, 10), rand_tensor(10, 10), Tensor.empty(10, 10).realize()
A, B, Cm = UOp.placeholder((10, 10), dtypes.float32, slot=0), UOp.placeholder((10, 10), dtypes.float32, slot=1), \
  UOp.placeholder((10, 10), dtypes.float32, slot=2)
i, j, k = UOp.range(10, axis_id=0), UOp.range(10, axis_id=1), UOp.range(10, axis_id=2, axis_type=AxisType.REDUCE)
Cm = Cm[i, j].set(0.0)
Cm = Cm[i, j].set(Cm.after(k)[i, j] + A[i, k] * B[k, j])
run_prog(Cm.end(i, j, k).sink(arg=KernelInfo(opts_to_apply=())), a, b, c)

start("TestUOpPrograms.test_matmul_relu")
a, b, c = rand_tensor(10, 10), rand_tensor(10, 10), Tensor.empty(10, 10).realize()
A, B, Cm = a.uop.placeholder_like(0), b.uop.placeholder_like(1), c.uop.placeholder_like(2)
i, j, k = UOp.range(10, 0), UOp.range(10, 1), UOp.range(10, 2, axis_type=AxisType.REDUCE)
Cm = Cm[i, j].set(0.0)
Cm = Cm[i, j].set(Cm.after(k)[i, j] + A[i, k] * B[k, j], end=k)
Cm = Cm[i, j].set(Cm[i, j].maximum(0.0))
run_prog(Cm.end(i, j).sink(arg=KernelInfo(opts_to_apply=())), a, b, c)

# the rest is the CPU renderers' business: another device's goldens stop at its runs of the test_uops programs
if dev.device != "CPU":
  print(f"# goldens from tinygrad a9069c17 test/backend/test_uops.py ({dev.device} device, {type(dev.renderer).__name__})")
  print("\n".join(out))
  sys.exit(0)

# test/null/test_uops.py TestGatedStoreRewrite: to_uops_list with the base Renderer (test.helpers.full_rewrite)
def uops_list(test, us, ren=None, render=False):
  sink = UOp.group(*us)
  for r in sink.ranges: sink = sink.end(r)
  sink = sink.sink(arg=KernelInfo(opts_to_apply=()))
  full = C.full_rewrite_to_sink(sink, ren if ren is not None else Renderer(Target()), optimize=sink.tag is None)
  lst = C.line_rewrite(linearize(full), C.pm_linearize_cleanups)
  out.append(f"linear {test} 1")
  emit_graph("sink", enc_graph(full))
  emit_graph("program", enc_graph(UOp(Ops.LINEAR, src=tuple(lst))))
  if render: emit_graph("source", ren.render(lst).split("\n"))

gmem = UOp.param(0, dtypes.float, (8,))
gidx0 = UOp.special(4, 'gidx0')
gate = gidx0 < UOp.const(1)
idx = UOp(Ops.INDEX, src=(gmem, (gidx0 * UOp.const(2)).valid(gate)))
uops_list("TestGatedStoreRewrite.test_tiny_gate_store", [UOp(Ops.STORE, src=(idx, UOp.const(42.0).cast(dtypes.float)))])

gmem0, gmem1 = UOp.param(0, dtypes.float, (8,)), UOp.param(1, dtypes.float, (8,))
gidx0 = UOp.special(4, 'gidx0')
idx = gidx0 * UOp.const(2)
idx0 = UOp(Ops.INDEX, src=(gmem0, idx.valid(gidx0 < UOp.const(1))))
idx1 = UOp(Ops.INDEX, src=(gmem1, idx))
val = UOp.const(42.0).cast(dtypes.float)
uops_list("TestGatedStoreRewrite.test_gate_some_stores", [UOp.store(idx0, val), UOp.store(idx1, val)])

# TestBitcastBufferView.test_render: the device's renderer renders the list
buf = UOp.param(0, dtypes.uint32, (4,))
uops_list("TestBitcastBufferView.test_render", [buf.shrink(((1, 3),)).bitcast(dtypes.uint64).index(0).store(1)], ren=dev.renderer,
          render=True)

# ***** hand-built programs that reach corners of the late stage the tensor kernels do not *****
# lowered with full_rewrite_to_sink (ClangRenderer unless said), then linearized; rendered by ClangRenderer and
# CPULLVMRenderer when they can; run on the reference's PYTHON device (ops_python.PythonProgram) on given inputs.
from tinygrad.renderer.llvmir import CPULLVMRenderer
from tinygrad.runtime.ops_python import PythonProgram
from tinygrad.codegen import do_to_program
from tinygrad.runtime.ops_cpu import signal_prog, wait_prog, timestamp_prog, worker_prog
from dataclasses import replace as dc_replace
clang = dev.renderer
llvm = CPULLVMRenderer(dc_replace(clang.target, renderer="LLVM"))

def emulate(lst, inputs, vals=(), global_size=(1,1,1), local_size=(1,1,1)):
  prg = object.__new__(PythonProgram)
  prg.uops, prg.uop_to_index = lst, {u: i for i, u in enumerate(lst)}
  prg.loop_ends = {u.src[1]: i for i, u in enumerate(lst) if u.op == Ops.END}
  bufs = [memoryview(bytearray(pack(v, dt))) for dt, v in inputs]
  prg(*bufs, global_size=global_size, local_size=local_size, vals=vals)
  return [(dt, len(v), pack(v, dt).hex(), bytes(b).hex()) for (dt, v), b in zip(inputs, bufs)]

def handbuilt(test, sink=None, full=None, runs=()):
  if full is None: full = C.full_rewrite_to_sink(sink.sink(arg=KernelInfo(test.split(".")[-1], opts_to_apply=())) if sink.op is not Ops.SINK else sink,
                                                 clang, optimize=False)
  lst = C.line_rewrite(linearize(full), C.pm_linearize_cleanups)
  out.append(f"linear {test} 1")
  emit_graph("sink", enc_graph(full))
  emit_graph("program", enc_graph(UOp(Ops.LINEAR, src=tuple(lst))))
  for key, ren in (("source", clang), ("llvm_source", llvm)):
    try: emit_graph(key, ren.render(lst).split("\n"))
    except Exception as e: out.append(f"# {key}: {type(e).__name__}")
  for inputs, vals, gs, ls in runs:
    out.append("run " + " ".join(str(x) for x in gs) + " " + " ".join(str(x) for x in ls))
    out.append("vals" + "".join(f" {v}" for v in vals))
    for dt, n, x, y in emulate(lst, inputs, vals, gs, ls): out.append(f"buf {dtype_attr(dt)} {n} {x or '-'} {y or '-'}")

# the CPU device's own helper programs, lowered as CPUDevice.__init__ does (tag=1: no optimization): volatile params,
# an unbounded loop with a conditional backedge, CALLs of function pointers, a REG buffer, a 2**64-1 range
for f in (signal_prog, wait_prog, timestamp_prog, worker_prog):
  prg = do_to_program(f().sink(arg=KernelInfo(f.__name__), tag=1), clang)
  runs = {"signal_prog": [([(dtypes.uint32, [0])], (7,), (1,1,1), (1,1,1))],
          "wait_prog": [([(dtypes.uint32, [9])], (5,), (1,1,1), (1,1,1))]}.get(f.__name__, [])
  handbuilt(f"CPUDevice.{f.__name__}", full=prg.src[0].replace(arg=dc_replace(prg.src[0].arg, estimates=None)), runs=runs)

# a gated store inside a loop becomes IF/STORE/ENDIF
g = UOp.param(0, dtypes.float, (8,))
r = UOp.range(4, 0)
handbuilt("Late.gated_store", g.index((r*2).valid(r < 1)).store(UOp.const(42.0).cast(dtypes.float)).end(r),
          runs=[([(dtypes.float, [1.0]*8)], (), (1,1,1), (1,1,1))])
# a gated load (an out-of-range read gives the alt value)
o, a = UOp.param(0, dtypes.float, (4,)), UOp.param(1, dtypes.float, (3,))
r = UOp.range(4, 0)
handbuilt("Late.gated_load", o.index(r).store(a.index(r.valid(r < 3)) + 1.0).end(r),
          runs=[([(dtypes.float, [0.0]*4), (dtypes.float, [1.5, 2.5, 3.5])], (), (1,1,1), (1,1,1))])
# GPU dims: a global and a local SPECIAL (a warp of 4 lanes in the interpreter); not renderable on the CPU
o = UOp.param(0, dtypes.int, (8,))
gi, li = UOp.special(2, "gidx0"), UOp.special(4, "lidx0")
handbuilt("Late.special_dims", o.index(gi*4+li).store((gi*10+li).cast(dtypes.int)),
          runs=[([(dtypes.int, [0]*8)], (), (2,1,1), (4,1,1))])
# a LOCAL buffer shared by the lanes of a warp, a barrier, reversed lanes read back
o = UOp.param(0, dtypes.float, (4,))
li = UOp.special(4, "lidx0")
smem = UOp.placeholder((4,), dtypes.float, slot=0, addrspace=AddrSpace.LOCAL)
st = smem.index(li).store(li.cast(dtypes.float) * 2.0)
handbuilt("Late.local_reverse", o.index(li).store(smem.after(UOp(Ops.BARRIER, src=(st,))).index(3 - li)),
          runs=[([(dtypes.float, [0.0]*4)], (), (1,1,1), (4,1,1))])
# a variable bound at run time, nested loops and a reduction into a register accumulator
o, a = UOp.param(0, dtypes.float, (4,)), UOp.param(1, dtypes.float, (24,))
n = UOp.variable("n", 1, 6, param=True)
i, j = UOp.range(4, 0), UOp.range(n, 1, AxisType.REDUCE)
handbuilt("Late.variable_reduce", o.index(i).store(a.index(i*6+j).reduce(j, arg=(Ops.ADD, 0))).end(i),
          runs=[([(dtypes.float, [0.0]*4), (dtypes.float, [float(x) for x in range(24)])], (5,), (1,1,1), (1,1,1))])
# ***** python's list.sort, which the linearizer's sort must reproduce (keys holding a nan are not a strict weak order)
srng = random.Random(3)
def floats(n, p_nan=0.1): return [math.nan if srng.random() < p_nan else float(srng.randint(-50, 50)) for _ in range(n)]
sort_cases = []
for n in (0, 1, 2, 5, 31, 63, 64, 65, 100, 257, 700):
  sort_cases.append(("random_nan", floats(n)))
  sort_cases.append(("dups", [float(srng.randint(0, 3)) for _ in range(n)]))
for n in (64, 300, 700):
  sort_cases.append(("runs_nan", sum([sorted(floats(srng.randint(5, 80), 0)) + [math.nan] for _ in range(n // 40 + 1)], [])[:n]))
  sort_cases.append(("descending_runs", sum([sorted(floats(srng.randint(5, 80), 0), reverse=True) for _ in range(n // 40 + 1)], [])[:n]))
  sort_cases.append(("gallop", sorted(floats(n // 2, 0)) + sorted(floats(n - n // 2, 0))))
  sort_cases.append(("gallop_nan", sorted(floats(n // 2, 0)) + [math.nan] * 3 + sorted(floats(n - n // 2 - 3, 0))))
for kind, vals in sort_cases:
  out.append(f"pysort {kind} {len(vals)} " + " ".join(repr(v) for v in vals))
  out.append("perm " + " ".join(str(i) for i in sorted(range(len(vals)), key=lambda i: vals[i])))

print(f"# goldens from tinygrad a9069c17 test/backend/test_uops.py and test/null/test_uops.py (CPU device, ClangRenderer)")
print("\n".join(out))
