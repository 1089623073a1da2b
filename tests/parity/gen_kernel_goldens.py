#!/usr/bin/env python3
# Regenerates tests/parity/kernel_goldens.txt: the late stage of the reference's pipeline (linearize, render, run) for
# a set of small tensor programs on the CPU device.
#
# Run from a checkout of tinygrad a9069c17 (clang must be installed, it runs the kernels):
#   cd <tinygrad> && DEV=CPU PARALLEL=0 python3 <repo>/tests/parity/gen_kernel_goldens.py > <repo>/tests/parity/kernel_goldens.txt
#
# How the capture works. Every kernel of a realize goes through engine/realize.py::lower_and_compile ->
# codegen.to_program(ast, renderer) -> do_to_program, which calls full_rewrite_to_sink (all codegen passes) and then
# rewrites PROGRAM(sink) with pm_to_program: do_linearize = line_rewrite(linearize(sink), pm_linearize_cleanups)
# (the LINEAR), do_estimates, do_render (the SOURCE, what DEBUG=4 prints) and do_compile. We wrap
#   * codegen.full_rewrite_to_sink: its result is the SINK entering linearize;
#   * engine.realize.to_program: after the real ClangRenderer run, PROGRAM.src[1] is the LINEAR the renderer consumed
#     and PROGRAM.src[2] the C source; linearize(sink) is recomputed for the raw priority toposort. The same AST is
#     then lowered again with CPULLVMRenderer the way do_to_program does (full_rewrite_to_sink, ProgramInfo.from_sink,
#     do_linearize, do_render) but not compiled: the IR uses typed pointers, which only LLVM >= 16 parses;
#   * the exec_kernel rule of engine.realize.pm_exec: the kernel's buffers (in PROGRAM.arg.globals order, the order
#     the PARAMs appear in the linear program) before and after the first run, its Variable values and launch dims.
# (Rules are compiled with a snapshot of their module's globals, so do_linearize itself cannot be wrapped.)
#
# File format (one record per kernel; graphs are encoded with uop_codec.py, one node per line):
#   kernel <k> <function_name> <program name>
#   clang|llvm      the renderer of the following block
#     sink <n>      + n lines: the SINK entering linearize            (llvm: "same" = the clang block's)
#     linear <n>    + n lines: LINEAR(*linearize(sink))               (llvm: "same" = the clang block's)
#     program <n>   + n lines: LINEAR(*line_rewrite(...)), what the renderer consumes ("same" = this block's linear)
#     source <n>    + n lines: the rendered source
#     cfg_in/cfg_out <n>  the "add control flow" pass (CFGContext + pm_add_control_flow, bottom-up), only when it
#                   changed the graph ("same" = this block's sink)
#     split_ends_in/split_ends_out <n>  pm_split_ends alone on the input of "final rewrite", only when it changed it
#     global <g0> <g1> <g2>   the launch dims (ProgramInfo.global_size)
#     info global=.. local=.. vars=.. globals=.. outs=.. ins=..   the PROGRAM's ProgramInfo (from_sink)
#     est ops=.. lds=.. mem=..   Estimates.from_uops(program, ignore_indexing=True) (do_estimates), UOps unsimplified
#   run             the first execution (values from the clang-compiled kernel)
#     vals <v...>   Variable values in slot order ('-' = core_id, filled by the launcher)
#     buf <dtype attr> <count> <hex before> <hex after>   one per global buffer, in slot order
#     emu clang|llvm <hex after...>   the reference's PYTHON device (ops_python.PythonProgram) run on that block's
#                   program with the same inputs, when it can run it (python_alu has no FDIV; python 3.11 has no
#                   float16 memoryviews)
import os, sys, random, math
os.environ.setdefault("DEV", "CPU")
os.environ.setdefault("PARALLEL", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
from dataclasses import replace
from uop_codec import enc_graph, dtype_attr
from tinygrad import Tensor, Device, Variable, dtypes
from tinygrad.uop.ops import UOp, Ops, PatternMatcher, UPat
import tinygrad.engine.realize as R
import tinygrad.codegen as C
from tinygrad.renderer.llvmir import CPULLVMRenderer
from tinygrad.codegen.opt import Opt, OptOps
from tinygrad.renderer import Estimates
from tinygrad.runtime.ops_python import PythonProgram

dev = Device["CPU"]  # open the device first: its own helper programs are not captured
clang_ren = dev.renderer
llvm_ren = CPULLVMRenderer(replace(clang_ren.target, renderer="LLVM"))

kernels: list[dict] = []
by_key: dict = {}
current_program = ["?"]
last_sink: list = []

# the two late passes of full_rewrite_to_sink that are ours to port, with their input and output
last_passes: dict = {}
orig_graph_rewrite = C.graph_rewrite
def graph_rewrite(sink, pm, *args, **kwargs):
  ret = orig_graph_rewrite(sink, pm, *args, **kwargs)
  if kwargs.get("name") == "add control flow": last_passes["cfg"] = (sink, ret)
  if kwargs.get("name") == "final rewrite": last_passes["split_ends"] = (sink, orig_graph_rewrite(sink, C.pm_split_ends))
  return ret
C.graph_rewrite = graph_rewrite

orig_full = C.full_rewrite_to_sink
def full_rewrite_to_sink(ast, ren, optimize=True):
  ret = orig_full(ast, ren, optimize)
  last_sink.append(ret)
  return ret
C.full_rewrite_to_sink = full_rewrite_to_sink

def info_line(info) -> str:
  def dims(d): return "None" if d is None else ",".join(x.render() if isinstance(x, UOp) else str(x) for x in d)
  def ints(v): return ",".join(str(x) for x in v) or "-"
  return (f"info global={dims(info.global_size)} local={dims(info.local_size)} vars={','.join(v.expr for v in info.vars) or '-'} "
          f"globals={ints(info.globals)} outs={ints(info.outs)} ins={ints(info.ins)}")

def est_line(lst) -> str:
  # do_estimates: Estimates.from_uops(lin.src, ignore_indexing=True); symbolic parts as render(simplify=False)
  e = Estimates.from_uops(tuple(lst), ignore_indexing=True)
  def r(x): return x.render(simplify=False) if isinstance(x, UOp) else str(x)
  return f"est ops={r(e.ops)} lds={r(e.lds)} mem={r(e.mem)}"

def passes() -> dict:
  # only kept when the pass changed something
  return {k: (enc_graph(a), enc_graph(b)) for k, (a, b) in last_passes.items() if a is not b}

def capture(ast, ren, prg) -> dict:
  sink = last_sink.pop()
  assert prg.src[1].op is Ops.LINEAR and prg.src[2].op is Ops.SOURCE
  raw = C.linearize(sink)
  return {"sink": enc_graph(sink), "linear": enc_graph(UOp(Ops.LINEAR, src=tuple(raw))), "program": enc_graph(prg.src[1]),
          "source": prg.src[2].arg.split("\n"), "global": prg.arg.global_size, "passes": passes(), "uops": list(prg.src[1].src),
          "info": info_line(prg.arg), "est": est_line(prg.src[1].src)}

def lower_llvm(ast) -> dict:
  # do_to_program without do_compile: the IR uses typed pointers, which only LLVM >= 16 reads (this machine may have 15)
  last_sink.clear()
  last_passes.clear()
  sink = C.full_rewrite_to_sink(ast, llvm_ren, optimize=ast.tag is None)
  last_sink.clear()
  info = C.ProgramInfo.from_sink(sink, llvm_ren.target)
  raw = C.linearize(sink)
  lst = C.line_rewrite(raw, C.pm_linearize_cleanups)
  return {"sink": enc_graph(sink), "linear": enc_graph(UOp(Ops.LINEAR, src=tuple(raw))),
          "program": enc_graph(UOp(Ops.LINEAR, src=tuple(lst))), "source": llvm_ren.render(lst).split("\n"), "global": info.global_size,
          "passes": passes(), "uops": lst, "info": info_line(info), "est": est_line(lst)}

orig_to_program = R.to_program
forced_opts: list = [None]
def to_program(ast, ren):
  # a program may force its kernels' opts (KernelInfo.opts_to_apply), e.g. THREAD on kernels below the heuristic's size
  if forced_opts[0] is not None: ast = ast.replace(arg=replace(ast.arg, opts_to_apply=forced_opts[0]))
  last_sink.clear()
  last_passes.clear()
  prg = orig_to_program(ast, ren)
  if not last_sink: return prg  # cached
  k = {"id": len(kernels), "program": current_program[0], "name": prg.src[0].arg.function_name, "clang": capture(ast, ren, prg)}
  k["llvm"] = lower_llvm(ast)
  kernels.append(k)
  by_key[prg.key] = k
  return prg
R.to_program = to_program

orig_exec = R.exec_kernel
def exec_kernel(ctx, call, ast):
  k = by_key.get(ast.key)
  if k is None or "run" in k: return orig_exec(ctx, call, ast)
  resolved = R.resolve_params(call, ctx.input_uops)
  bufs = [resolved[i].buffer.ensure_allocated() for i in ast.arg.globals]
  before = [bytes(b.as_memoryview()) for b in bufs]
  ret = orig_exec(ctx, call, ast)
  after = [bytes(b.as_memoryview()) for b in bufs]
  k["run"] = {"vals": ast.arg.vals(ctx.var_vals),
              "bufs": [(dtype_attr(b.dtype), b.size, x.hex(), y.hex()) for b, x, y in zip(bufs, before, after)],
              "emu": {r: emulate(k[r]["uops"], before, ast.arg.vals(ctx.var_vals), k[r]["global"]) for r in ("clang", "llvm")}}
  return ret

def emulate(uops, before, vals, global_size):
  # the reference's PYTHON device (runtime/ops_python.py PythonProgram) on the same linear program and inputs; a
  # core_id kernel runs once per thread id like the CPU launcher. None when it cannot (python_alu has no FDIV, and
  # python < 3.12 has no float16 memoryviews)
  prg = object.__new__(PythonProgram)
  prg.uops, prg.uop_to_index = uops, {u: i for i, u in enumerate(uops)}
  prg.loop_ends = {u.src[1]: i for i, u in enumerate(uops) if u.op == Ops.END}
  bufs = [memoryview(bytearray(x)) for x in before]
  try:
    if None in vals:
      for tid in range(global_size[0]): prg(*bufs, vals=tuple(tid if v is None else v for v in vals))
    else: prg(*bufs, global_size=global_size, vals=vals)
  except Exception as e: return f"{type(e).__name__}: {str(e).strip().splitlines()[0][:60] if str(e).strip() else ''}"
  return [bytes(b).hex() for b in bufs]
R.pm_exec = PatternMatcher([(UPat(Ops.CALL, src=(UPat(Ops.PROGRAM, name="ast"),), name="call", allow_any_len=True), exec_kernel)]) + R.pm_exec

# ***** the tensor programs *****
rng = random.Random(1337)
def fl(*shape, lo=-2.0, hi=2.0, dtype=dtypes.float32):
  n = math.prod(shape)
  return Tensor([rng.uniform(lo, hi) for _ in range(n)], dtype=dtype).reshape(*shape)
def it(*shape, lo=-20, hi=20, dtype=dtypes.int32, div=1):
  # div: the values drawn in [lo, hi] are divided (floor) by it, so a program's operands stay small enough that signed
  # arithmetic cannot overflow (undefined behaviour: LLVM's add nsw is poison there) while the draws stay the same
  n = math.prod(shape)
  return Tensor([rng.randint(lo, hi) // div for _ in range(n)], dtype=dtype).reshape(*shape)
def nz(*shape, lo=1, hi=9, dtype=dtypes.int32):  # nonzero ints with random sign
  n = math.prod(shape)
  return Tensor([rng.randint(lo, hi) * rng.choice((-1, 1)) for _ in range(n)], dtype=dtype).reshape(*shape)

def p_symbolic():
  a = fl(3, 10)
  vi = Variable("i", 1, 10).bind(4)
  return (a[:, :vi] * 2 + 1)
def p_symbolic_sum():
  a = fl(10, 4)
  vi = Variable("j", 1, 10).bind(7)
  return a[:vi].sum(0)

programs = [
  ("add_f32", lambda: fl(4) + fl(4)),
  ("chain_f32", lambda: (fl(16) * fl(16) - fl(16)) * 0.5 + 3.0),
  ("div_f32", lambda: fl(8) / fl(8, lo=0.5, hi=3.0)),
  ("add_i32", lambda: it(12) * it(12) + 7),
  ("add_i8", lambda: it(8, lo=-128, hi=127, dtype=dtypes.int8, div=2) + it(8, lo=-128, hi=127, dtype=dtypes.int8, div=2)),
  ("mul_u8", lambda: it(8, lo=0, hi=255, dtype=dtypes.uint8) * it(8, lo=0, hi=255, dtype=dtypes.uint8)),
  ("sub_i16", lambda: it(6, lo=-30000, hi=30000, dtype=dtypes.int16, div=2) - it(6, lo=-30000, hi=30000, dtype=dtypes.int16, div=2)),
  ("add_u16", lambda: it(6, lo=0, hi=65535, dtype=dtypes.uint16) + 1000),
  ("mul_i64", lambda: it(5, lo=-10**9, hi=10**9, dtype=dtypes.int64) * 12345),
  ("add_u32", lambda: it(5, lo=0, hi=2**32-1, dtype=dtypes.uint32) + it(5, lo=0, hi=2**32-1, dtype=dtypes.uint32)),
  ("mul_u64", lambda: it(4, lo=0, hi=2**40, dtype=dtypes.uint64) * 3),
  ("add_f64", lambda: fl(6, dtype=dtypes.float64) * fl(6, dtype=dtypes.float64) + 1.0),
  ("add_f16", lambda: fl(8, dtype=dtypes.float16) + fl(8, dtype=dtypes.float16)),
  ("mul_bf16", lambda: fl(4, dtype=dtypes.bfloat16) * fl(4, dtype=dtypes.bfloat16)),
  ("bool_logic", lambda: (fl(8) < 0) & (fl(8) > -1) | (fl(8) == 0)),
  ("bcast_2d", lambda: fl(4, 1) + fl(1, 5)),
  ("bcast_scalar", lambda: fl(3, 4) * fl(1, 1)),
  ("sum_axis0", lambda: fl(4, 6).sum(0)),
  ("sum_axis1", lambda: fl(4, 6).sum(1)),
  ("sum_all", lambda: fl(5, 7).sum()),
  ("sum_3d_axis1", lambda: fl(2, 3, 4).sum(1)),
  ("max_axis0", lambda: fl(5, 3).max(0)),
  ("max_axis1", lambda: fl(5, 3).max(1)),
  ("prod_axis1", lambda: fl(3, 4, lo=0.5, hi=1.5).prod(1)),
  ("sum_i32", lambda: it(6, 5).sum(1)),
  ("mean", lambda: fl(4, 8).mean(1)),
  ("matmul_small", lambda: fl(3, 4) @ fl(4, 5)),
  ("matmul_8", lambda: fl(8, 8) @ fl(8, 8)),
  ("pad", lambda: fl(3, 3).pad(((1, 2), (0, 1)))),
  ("shrink", lambda: (fl(6, 6)[1:4, 2:5] + 1)),
  ("flip", lambda: fl(4, 3).flip(0) + fl(4, 3).flip(1)),
  ("permute", lambda: fl(2, 3, 4).permute(2, 0, 1).contiguous()),
  ("where", lambda: (fl(10) > 0).where(fl(10), fl(10) * -1)),
  ("cast_f2i", lambda: (fl(8, lo=-100, hi=100)).cast(dtypes.int32)),
  ("cast_i2f", lambda: it(8, lo=-1000, hi=1000).cast(dtypes.float32) * 0.25),
  ("cast_f2h", lambda: fl(8).cast(dtypes.float16)),
  ("cast_u8_f", lambda: it(8, lo=0, hi=255, dtype=dtypes.uint8).cast(dtypes.float32)),
  ("cast_b_i", lambda: (fl(8) > 0).cast(dtypes.int32) + 1),
  ("bitcast_f2i", lambda: fl(6).bitcast(dtypes.int32)),
  ("bitcast_i2f", lambda: it(6, lo=0, hi=2**30).bitcast(dtypes.float32)),
  ("idiv", lambda: it(12, lo=-50, hi=50) // nz(12)),
  ("imod", lambda: it(12, lo=-50, hi=50) % nz(12)),
  ("idiv_const", lambda: it(12, lo=-50, hi=50) // 7),
  ("shifts", lambda: (it(8, lo=0, hi=1000) << 3) + (it(8, lo=0, hi=1000) >> 2)),
  ("bitwise", lambda: (it(8) & it(8)) ^ (it(8) | 5)),
  ("exp", lambda: fl(8).exp()),
  ("log", lambda: fl(8, lo=0.1, hi=10).log()),
  ("sin", lambda: fl(8, lo=-6, hi=6).sin()),
  ("sqrt", lambda: fl(8, lo=0, hi=10).sqrt()),
  ("exp2_log2", lambda: fl(6).exp2() + fl(6, lo=0.5, hi=4).log2()),
  ("recip", lambda: fl(6, lo=0.5, hi=4).reciprocal()),
  ("relu_max", lambda: fl(10).relu() + fl(10).maximum(fl(10))),
  ("abs_neg", lambda: fl(8).abs() - (-fl(8))),
  ("trunc_floor", lambda: fl(8, lo=-5, hi=5).trunc() + fl(8, lo=-5, hi=5).floor() + fl(8, lo=-5, hi=5).ceil()),
  ("cmp_i32", lambda: (it(8) < it(8)).cast(dtypes.int32) + (it(8) == it(8)).cast(dtypes.int32)),
  ("argmax", lambda: fl(4, 6).argmax(1)),
  ("softmax", lambda: fl(3, 5).softmax(1)),
  ("arange", lambda: Tensor.arange(10) * 2),
  ("cumsum", lambda: fl(6).cumsum(0)),
  ("conv2d", lambda: fl(1, 2, 5, 5).conv2d(fl(3, 2, 3, 3))),
  ("double_sum", lambda: fl(6, dtype=dtypes.float64).sum()),
  ("half_sum", lambda: fl(8, dtype=dtypes.float16).sum()),
  ("symbolic", p_symbolic),
  ("symbolic_sum", p_symbolic_sum),
  ("pad", lambda: fl(3, 3).pad(((1, 2), (0, 1))).contiguous()),
  ("arange", lambda: (Tensor.arange(10) * 2).contiguous()),
  # opts the CPU heuristic only picks for big kernels: THREAD (core_id) on 2 threads, explicit UPCAST/UNROLL
  ("thread_add", lambda: fl(8) + fl(8), (Opt(OptOps.THREAD, 0, 2),)),
  ("thread_sum", lambda: fl(4, 6).sum(1), (Opt(OptOps.THREAD, 0, 2),)),
  ("upcast_unroll", lambda: fl(4, 8).sum(1), (Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.UNROLL, 0, 4))),
  ("thread_symbolic", lambda: fl(4, 10)[:, :Variable("k", 1, 10).bind(6)] + 1, (Opt(OptOps.THREAD, 0, 2),)),
]

skipped = []
for name, fn, *opts in programs:
  current_program[0], forced_opts[0] = name, (opts[0] if opts else None)
  n_before = len(kernels)
  C.to_program_cache.clear()  # keyed by the AST without the forced opts; every program lowers its own kernels
  try:
    t = fn().realize()
    if len(kernels) == n_before: t.tolist()  # a graph of consts is only computed when read
  except Exception as e:  # e.g. clang 14 has no __bf16 on x86: the program is left out
    del kernels[n_before:]
    skipped.append(f"{name} ({type(e).__name__}: {str(e).strip().splitlines()[0][:80]})")

print(f"# goldens from tinygrad a9069c17 (CPU device: ClangRenderer and CPULLVMRenderer), {len(programs)} programs, "
      f"{len(kernels)} kernels")
for sk in skipped: print(f"# skipped {sk}")
def block(key, lines, same_as=None):
  if same_as is not None and lines == same_as: print(f"{key} same")
  else:
    print(f"{key} {len(lines)}")
    if lines: print("\n".join(lines))

for k in kernels:
  print(f"kernel {k['id']} {k['name']} {k['program']}")
  for r in ("clang", "llvm"):
    c, other = k[r], (k["clang"] if r == "llvm" else None)
    print(r)
    block("sink", c["sink"], other and other["sink"])
    block("linear", c["linear"], other and other["linear"])
    block("program", c["program"], c["linear"])
    block("source", c["source"])
    for name, (a, b) in c["passes"].items():
      block(f"{name}_in", a, c["sink"] if name == "cfg" else None)
      block(f"{name}_out", b, c["sink"] if name == "cfg" else None)
    print("global " + " ".join(str(x) for x in c["global"]))
    print(c["info"])
    print(c["est"])
  run = k.get("run")
  if run is None: continue
  print("run")
  print("vals" + "".join(" -" if v is None else f" {v}" for v in run["vals"]))
  for dt, n, x, y in run["bufs"]: print(f"buf {dt} {n} {x or '-'} {y or '-'}")
  for r, emu in run["emu"].items():
    if isinstance(emu, str): print(f"# emu {r} failed: {emu}")
    else: print(f"emu {r} " + " ".join(x or "-" for x in emu))
