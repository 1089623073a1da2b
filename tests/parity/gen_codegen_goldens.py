#!/usr/bin/env python3
# Regenerates tests/data/codegen_goldens.txt: the per-kernel codegen of the reference (codegen/__init__.py
# full_rewrite_to_sink: every pass, the opts, the final SINK), then linearize and render, for small tensor programs on
# the CPU device.
#
# Run from a checkout of tinygrad a9069c17 (clang must be installed, it runs the kernels):
#   cd <tinygrad> && python3 <repo>/tests/parity/gen_codegen_goldens.py <repo>/tests/data/codegen_goldens.txt
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
import os, sys
os.environ["DEV"] = "CPU"
os.environ["PARALLEL"] = "0"
os.environ["TRACK_MATCH_STATS"] = "2"
os.environ["PRINT_MATCH_STATS"] = "0"
os.environ["NUM_CPU_THREADS"] = "8"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dataclasses import replace
from golden_gen import (out_path, err_text, write_pooled, write_block, StepRecorder, fl, kernel_programs, run_programs, info_line, run_lines,
                        capture_first_runs, emulate)
from tinygrad import Tensor, Device
from tinygrad.helpers import Context
from tinygrad.uop.ops import UOp, Ops
import tinygrad.engine.realize as R
import tinygrad.codegen as C
from tinygrad.renderer.cstyle import ClangRenderer
from tinygrad.renderer.llvmir import CPULLVMRenderer
from tinygrad.codegen.opt import Opt, OptOps

OUT = out_path("codegen_goldens.txt")
dev = Device["CPU"]
clang_ren = dev.renderer
llvm_ren = CPULLVMRenderer(replace(clang_ren.target, renderer="LLVM"))
class LocalClangRenderer(ClangRenderer):
  has_local = True
  has_threads = False
  global_max = (0x8FFFFFFF,) * 3
local_ren = LocalClangRenderer(clang_ren.target)
assert clang_ren.global_max == (8, 0, 0)

# every tracked graph_rewrite of full_rewrite_to_sink; the depth-0 ones (the passes) with the graph they returned
rec = StepRecorder(keep_input=lambda depth: depth == 0)

def lower(ast, ren, noopt=False) -> dict:
  rec.start(0)
  try:
    with Context(NOOPT=int(noopt)):
      sink = C.full_rewrite_to_sink(ast, ren, optimize=ast.tag is None)
  finally: rec.on = False
  ki = sink.arg
  ret = {"sink": sink, "name": ki.name, "fname": ki.function_name, "steps": rec.steps,
         "opts": [f"{o.op.name} {o.axis} {o.arg}" for o in ki.applied_opts],
         "passes": [(n, a is b, b) for d, n, a, b in rec.calls if d == 0 and b is not None]}
  info = C.ProgramInfo.from_sink(sink, ren.target)
  lst = C.line_rewrite(C.linearize(sink), C.pm_linearize_cleanups)
  ret["uops"], ret["info"] = lst, info
  if ren is not local_ren: ret["source"] = ren.render(lst).split("\n")
  return ret

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
    except Exception as e: return {"error": err_text(e, 100)}
  k["variants"]["llvm"] = attempt(ast, llvm_ren)
  if current_program[0] in noopt_programs: k["variants"]["noopt"] = attempt(ast, clang_ren, noopt=True)
  k["variants"]["local"] = attempt(ast, local_ren)
  kernels.append(k)
  by_key[prg.key] = k
  return prg
R.to_program = to_program

def on_run(k, before, vals, var_vals):
  # the reference's PYTHON device on each variant's linear program. The buffers are passed in the order of the
  # variant's own ProgramInfo.globals, which is the run's order (same AST, same slots)
  for v in k["variants"].values():
    if "error" in v: continue
    gs, ls = v["info"].launch_dims(var_vals)
    v["emu"] = emulate(v["uops"], before, vals, gs, ls if ls is not None else (1, 1, 1))
capture_first_runs(by_key, on_run)

# ***** the tensor programs: gen_kernel_goldens.py's, then bigger ones *****
programs = kernel_programs() + [
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

def begin(name, opts): current_program[0], forced_opts[0] = name, opts
skipped = run_programs(programs, kernels, begin)

def write_kernel(w, ref, _, k):
  w(f"kernel {k['id']} {k['program']}")
  w(f"ast {ref(k['ast'])}")
  run = k.get("run")
  for vn, v in k["variants"].items():
    w(f"variant {vn}")
    if "error" in v:
      w("error " + v["error"])
      continue
    w("name " + v["name"].replace("\x1b", "\\x1b"))
    w("fname " + v["fname"])
    write_block(w, "opts", v["opts"])
    if vn != "clang" and v["steps"] == k["variants"]["clang"]["steps"]: w("steps =clang")
    else: write_block(w, "steps", v["steps"])
    for i, (pn, same, g) in enumerate(v["passes"]): w(f"pass {i} {pn} {ref(g)}")
    w(f"program {ref(UOp(Ops.LINEAR, src=tuple(v['uops'])))}")
    if "source" in v: write_block(w, "source", v["source"])
    w(info_line(v["info"]))
    emu = v.get("emu")
    if isinstance(emu, str): w(f"# emu failed: {emu}")
    elif emu is not None and run is not None:
      w("emu " + " ".join("=" if x == b[3] else "<" if x == b[2] else x for x, b in zip(emu, run["bufs"])))
  if run is None: return
  w("run")
  for l in run_lines(run): w(l)
write_pooled(OUT, [f"# goldens from tinygrad a9069c17: full_rewrite_to_sink per kernel (ClangRenderer, CPULLVMRenderer, NOOPT, "
                   f"has_local), {len(programs)} programs, {len(kernels)} kernels, NUM_CPU_THREADS=8"] +
             [f"# skipped {sk}" for sk in skipped], kernels, write_kernel)
print(f"{len(kernels)} kernels, {len(skipped)} skipped programs -> {OUT}")
