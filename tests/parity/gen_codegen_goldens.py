#!/usr/bin/env python3
# Regenerates tests/parity/codegen_goldens.txt: the per-kernel codegen of the reference (codegen/__init__.py
# full_rewrite_to_sink: every pass, the opts, the final SINK), then linearize and render, for small tensor programs on
# the CPU device.
#
# Run from a checkout of tinygrad a9069c17 (clang must be installed, it runs the kernels):
#   cd <tinygrad> && python3 <repo>/tests/parity/gen_codegen_goldens.py <repo>/tests/parity/codegen_goldens.txt
# (the environment it needs is set below: DEV=CPU, PARALLEL=0, TRACK_MATCH_STATS=2, NUM_CPU_THREADS=8)
#
# How the capture works. Every kernel of a realize reaches engine/realize.py::to_program(ast, renderer) with the AST
# the scheduler made (a SINK whose arg is KernelInfo). We take that AST and lower it ourselves with
# codegen.full_rewrite_to_sink for several renderer variants:
#   clang   the CPU device's ClangRenderer (the renderer the program really ran with)
#   llvm    CPULLVMRenderer (DEV=CPU:LLVM)
#   noopt   ClangRenderer with NOOPT=1 (no hand_coded_optimizations)
#   local   ClangRenderer with has_local=True, has_threads=False (a GPU-like target: LOCAL/GROUP/GROUPTOP opts, SPECIAL
#           dims, local buffers and barriers); not rendered (ClangRenderer has no workitem code), linearized and run by
#           the reference's PYTHON device
# graph_rewrite is wrapped at its root (the cell of the function rewrite_group decorates, so every module's reference
# to it is seen) to record each call: its name, the depth the reference's tracker gives it (only tracked calls count;
# simplify() and unnamed substitutes are untracked), its flags, and for depth-0 calls the graph it returned.
#
# File format. Graphs go into a per-kernel node pool: a line "+ <OP> <dtype attr> <arg> <tag> <src pool indices>" (the
# uop_codec.py node encoding) appends one node; every distinct node is written once per kernel, before its first use.
# A graph is then "@<pool index>" of its root.
#   kernel <k> <program>
#   ast @i                  the AST entering full_rewrite_to_sink
#   variant <clang|llvm|noopt|local>
#     error <message>       the reference raised (e.g. a forced THREAD opt on a target without threads); nothing follows
#     name <kernel name>    KernelInfo.name after codegen (ANSI escapes written as \x1b)
#     fname <function_name>
#     opts <n>              + n lines "<OPTOP> <axis> <arg>" (the applied opts, in order)
#     steps <n>|=clang      + n lines "<depth> <flags> <name>": every tracked graph_rewrite of full_rewrite_to_sink in
#                           order (depth as the reference's tracker counts it); flags: b bottom_up, w walk, '-' none
#     pass <i> <name> @j    the graph the i-th depth-0 step returned
#     program @j            LINEAR(*line_rewrite(linearize(sink), pm_linearize_cleanups))
#     source <n>            + n lines: the rendered source (clang, llvm, noopt)
#     info ...              ProgramInfo.from_sink
#     emu <b...>            per buffer, after the reference's PYTHON device ran this variant's program on the run's
#                           inputs: '=' the run's result, '<' unchanged input, else hex
#   run                     the first execution of the kernel (clang-compiled)
#     vals <v...>           Variable values in slot order ('-' = core_id)
#     buf <dtype attr> <count> <hex before> <hex after>
import os, sys, random, math
os.environ["DEV"] = "CPU"
os.environ["PARALLEL"] = "0"
os.environ["TRACK_MATCH_STATS"] = "2"
os.environ["PRINT_MATCH_STATS"] = "0"
os.environ["NUM_CPU_THREADS"] = "8"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
from dataclasses import replace
from uop_codec import enc_graph, enc_arg, dtype_attr
from tinygrad import Tensor, Device, Variable, dtypes
from tinygrad.helpers import Context
from tinygrad.uop.ops import UOp, Ops, PatternMatcher, UPat, TRACK_MATCH_STATS
import tinygrad.uop.ops as O
import tinygrad.engine.realize as R
import tinygrad.codegen as C
from tinygrad.renderer.cstyle import ClangRenderer
from tinygrad.renderer.llvmir import CPULLVMRenderer
from tinygrad.codegen.opt import Opt, OptOps
from tinygrad.runtime.ops_python import PythonProgram

out_path = sys.argv[1] if len(sys.argv) > 1 else "codegen_goldens.txt"
dev = Device["CPU"]
clang_ren = dev.renderer
llvm_ren = CPULLVMRenderer(replace(clang_ren.target, renderer="LLVM"))
class LocalClangRenderer(ClangRenderer):
  has_local = True
  has_threads = False
  global_max = (0x8FFFFFFF,) * 3
local_ren = LocalClangRenderer(clang_ren.target)
assert clang_ren.global_max == (8, 0, 0)

# ***** the graph_rewrite recorder *****
gr = O.graph_rewrite
cell = gr.__closure__[gr.__code__.co_freevars.index("func")]
orig_graph_rewrite = cell.cell_contents
rec: dict = {"on": False, "depth": 0, "steps": [], "passes": []}
def recording_graph_rewrite(sink, pm, *args, **kwargs):
  if not rec["on"]: return orig_graph_rewrite(sink, pm, *args, **kwargs)
  tracked = TRACK_MATCH_STATS.value >= 2
  name = kwargs.get("name") or "graph_rewrite"
  d = rec["depth"]
  if name in ("process UPat", "compile UPat"): tracked = False
  if tracked:
    flags = ("b" if kwargs.get("bottom_up") else "") + ("w" if kwargs.get("walk") else "")
    rec["steps"].append(f"{d} {flags or '-'} {name}")
    rec["depth"] += 1
  try: ret = orig_graph_rewrite(sink, pm, *args, **kwargs)
  finally:
    if tracked: rec["depth"] -= 1
  if tracked and d == 0: rec["passes"].append((name, sink, ret))
  return ret
cell.cell_contents = recording_graph_rewrite

def lower(ast, ren, noopt=False) -> dict:
  rec.update(on=True, depth=0, steps=[], passes=[])
  try:
    with Context(NOOPT=int(noopt)):
      sink = C.full_rewrite_to_sink(ast, ren, optimize=ast.tag is None)
  finally: rec["on"] = False
  ki = sink.arg
  ret = {"sink": sink, "name": ki.name, "fname": ki.function_name, "steps": rec["steps"],
         "opts": [f"{o.op.name} {o.axis} {o.arg}" for o in ki.applied_opts],
         "passes": [(n, a is b, b) for n, a, b in rec["passes"]]}
  info = C.ProgramInfo.from_sink(sink, ren.target)
  lst = C.line_rewrite(C.linearize(sink), C.pm_linearize_cleanups)
  ret["program"], ret["uops"], ret["info"] = enc_graph(UOp(Ops.LINEAR, src=tuple(lst))), lst, info
  if ren is not local_ren: ret["source"] = ren.render(lst).split("\n")
  return ret

def info_line(info) -> str:
  def dims(d): return "None" if d is None else ",".join(x.render() if isinstance(x, UOp) else str(x) for x in d)
  def ints(v): return ",".join(str(x) for x in v) or "-"
  return (f"info global={dims(info.global_size)} local={dims(info.local_size)} vars={','.join(v.expr for v in info.vars) or '-'} "
          f"globals={ints(info.globals)} outs={ints(info.outs)} ins={ints(info.ins)}")

# ***** capture of the kernels *****
kernels: list[dict] = []
by_key: dict = {}
current_program = ["?"]
forced_opts: list = [None]
noopt_programs: set = set()
orig_to_program = R.to_program
def to_program(ast, ren):
  if forced_opts[0] is not None: ast = ast.replace(arg=replace(ast.arg, opts_to_apply=forced_opts[0]))
  prg = orig_to_program(ast, ren)
  if prg.key in by_key: return prg
  k = {"id": len(kernels), "program": current_program[0], "ast": ast, "variants": {}}
  k["variants"]["clang"] = lower(ast, clang_ren)
  if k["variants"]["clang"]["source"] != prg.src[2].arg.split("\n"): print(f"WARNING: {current_program[0]}: clang variant differs from the real program")
  def attempt(*a, **kw):
    try: return lower(*a, **kw)
    except Exception as e: return {"error": f"{type(e).__name__}: {str(e).strip().splitlines()[0][:100] if str(e).strip() else ''}"}
  k["variants"]["llvm"] = attempt(ast, llvm_ren)
  if current_program[0] in noopt_programs: k["variants"]["noopt"] = attempt(ast, clang_ren, noopt=True)
  k["variants"]["local"] = attempt(ast, local_ren)
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
  vals = ast.arg.vals(ctx.var_vals)
  k["run"] = {"vals": vals, "bufs": [(dtype_attr(b.dtype), b.size, x.hex(), y.hex()) for b, x, y in zip(bufs, before, after)]}
  for v in k["variants"].values():
    if "error" not in v: v["emu"] = emulate(v, before, vals, ctx.var_vals)
  return ret
R.pm_exec = PatternMatcher([(UPat(Ops.CALL, src=(UPat(Ops.PROGRAM, name="ast"),), name="call", allow_any_len=True), exec_kernel)]) + R.pm_exec

def emulate(v, before, vals, var_vals):
  # the reference's PYTHON device (runtime/ops_python.py PythonProgram) on the variant's linear program. The buffers are
  # passed in the order of the variant's own ProgramInfo.globals, which is the run's order (same AST, same slots)
  info = v["info"]
  uops = v["uops"]
  prg = object.__new__(PythonProgram)
  prg.uops, prg.uop_to_index = uops, {u: i for i, u in enumerate(uops)}
  prg.loop_ends = {u.src[1]: i for i, u in enumerate(uops) if u.op == Ops.END}
  bufs = [memoryview(bytearray(x)) for x in before]
  gs, ls = info.launch_dims(var_vals)
  ls = ls if ls is not None else (1, 1, 1)
  try:
    if None in vals:
      for tid in range(gs[0]): prg(*bufs, vals=tuple(tid if x is None else x for x in vals))
    else: prg(*bufs, global_size=gs, local_size=ls, vals=vals)
  except Exception as e: return f"{type(e).__name__}: {str(e).strip().splitlines()[0][:60] if str(e).strip() else ''}"
  return [bytes(b).hex() for b in bufs]

# ***** the tensor programs (the first ones are gen_kernel_goldens.py's) *****
rng = random.Random(1337)
def fl(*shape, lo=-2.0, hi=2.0, dtype=dtypes.float32):
  n = math.prod(shape)
  return Tensor([rng.uniform(lo, hi) for _ in range(n)], dtype=dtype).reshape(*shape)
def it(*shape, lo=-20, hi=20, dtype=dtypes.int32, div=1):
  # div: the values drawn in [lo, hi] are divided (floor) by it, so a program's operands stay small enough that signed
  # arithmetic cannot overflow (undefined behaviour: LLVM's add nsw is poison there) while the draws stay the same
  n = math.prod(shape)
  return Tensor([rng.randint(lo, hi) // div for _ in range(n)], dtype=dtype).reshape(*shape)
def nz(*shape, lo=1, hi=9, dtype=dtypes.int32):
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
  ("thread_add", lambda: fl(8) + fl(8), (Opt(OptOps.THREAD, 0, 2),)),
  ("thread_sum", lambda: fl(4, 6).sum(1), (Opt(OptOps.THREAD, 0, 2),)),
  ("upcast_unroll", lambda: fl(4, 8).sum(1), (Opt(OptOps.UPCAST, 0, 2), Opt(OptOps.UNROLL, 0, 4))),
  ("thread_symbolic", lambda: fl(4, 10)[:, :Variable("k", 1, 10).bind(6)] + 1, (Opt(OptOps.THREAD, 0, 2),)),
  # bigger kernels: the heuristic's UPCAST/UNROLL choices and THREAD (>= 2*128K ops), a conv, a softmax
  ("matmul_64", lambda: fl(64, 64) @ fl(64, 64)),
  ("expand_sum_64", lambda: fl(64, 64).reshape(64, 1, 64).expand(64, 64, 64).sum(2)),
  ("conv2d_big", lambda: fl(1, 4, 10, 10).conv2d(fl(8, 4, 3, 3), padding=1)),
  ("softmax_big", lambda: fl(8, 64).softmax(1)),
  ("sum_4096", lambda: fl(4096).sum()),
  ("sum_rows", lambda: fl(16, 256).sum(1)),
  ("matvec", lambda: fl(64, 64) @ fl(64)),
  ("max_cols", lambda: fl(128, 16).max(0)),
  ("layernorm", lambda: fl(4, 32).layernorm()),
  ("stack_masked", lambda: Tensor.stack(fl(16, 16), fl(16, 16), fl(16, 16)).sum(0) + 1),
  # explicit opts (a variant that cannot take one is an error in the reference too: only opts valid everywhere)
  ("padto", lambda: fl(5, 7).sum(1), (Opt(OptOps.PADTO, 0, 8),)),
  ("padto_upcast", lambda: fl(6, 5).sum(1), (Opt(OptOps.PADTO, 0, 8), Opt(OptOps.UPCAST, 0, 4))),
  ("unroll_all", lambda: fl(4, 8).sum(1), (Opt(OptOps.UNROLL, 0, 0),)),
  ("upcast_2d", lambda: fl(8, 4).permute(1, 0).contiguous(), (Opt(OptOps.UPCAST, 0, 4), Opt(OptOps.UPCAST, 0, 2))),
]
noopt_programs.update({"add_f32", "sum_axis1", "matmul_8", "conv2d", "softmax", "argmax", "matmul_64", "sum_4096", "symbolic_sum",
                       "exp", "pad", "cumsum", "layernorm", "expand_sum_64"})

skipped = []
for name, fn, *opts in programs:
  current_program[0], forced_opts[0] = name, (opts[0] if opts else None)
  n_before = len(kernels)
  C.to_program_cache.clear()
  try:
    t = fn().realize()
    if len(kernels) == n_before: t.tolist()
  except Exception as e:
    del kernels[n_before:]
    skipped.append(f"{name} ({type(e).__name__}: {str(e).strip().splitlines()[0][:80]})")

out = open(out_path, "w")
def w(s): out.write(s + "\n")
w(f"# goldens from tinygrad a9069c17: full_rewrite_to_sink per kernel (ClangRenderer, CPULLVMRenderer, NOOPT, has_local), "
  f"{len(programs)} programs, {len(kernels)} kernels, NUM_CPU_THREADS=8")
for sk in skipped: w(f"# skipped {sk}")
pool: dict = {}
def ref(root: UOp) -> str:
  for u in root.toposort():
    if u in pool: continue
    w(f"+ {u.op.name} {dtype_attr(u.dtype)} {enc_arg(u.arg)} {enc_arg(u.tag)} {','.join(str(pool[x]) for x in u.src)}")
    pool[u] = len(pool)
  return f"@{pool[root]}"
def block(key, lines):
  w(f"{key} {len(lines)}")
  for l in lines: w(l)
for k in kernels:
  pool.clear()
  w(f"kernel {k['id']} {k['program']}")
  a = ref(k["ast"])
  w(f"ast {a}")
  run = k.get("run")
  for vn, v in k["variants"].items():
    w(f"variant {vn}")
    if "error" in v:
      w("error " + v["error"])
      continue
    w("name " + v["name"].replace("\x1b", "\\x1b"))
    w("fname " + v["fname"])
    block("opts", v["opts"])
    if vn != "clang" and v["steps"] == k["variants"]["clang"]["steps"]: w("steps =clang")
    else: block("steps", v["steps"])
    for i, (pn, same, g) in enumerate(v["passes"]):
      r = ref(g)
      w(f"pass {i} {pn} {r}")
    r = ref(UOp(Ops.LINEAR, src=tuple(v["uops"])))
    w(f"program {r}")
    if "source" in v: block("source", v["source"])
    w(info_line(v["info"]))
    emu = v.get("emu")
    if isinstance(emu, str): w(f"# emu failed: {emu}")
    elif emu is not None and run is not None:
      w("emu " + " ".join("=" if x == b[3] else "<" if x == b[2] else x for x, b in zip(emu, run["bufs"])))
  if run is None: continue
  w("run")
  w("vals" + "".join(" -" if v is None else f" {v}" for v in run["vals"]))
  for dt, n, x, y in run["bufs"]: w(f"buf {dt} {n} {x or '-'} {y or '-'}")
out.close()
print(f"{len(kernels)} kernels, {len(skipped)} skipped programs -> {out_path}")
