#!/usr/bin/env python3
# Regenerates tests/data/kernel_goldens.txt: the late stage of the reference's pipeline (linearize, render, run) for
# a set of small tensor programs on the CPU device.
#
# Run from a checkout of tinygrad a9069c17 (clang must be installed, it runs the kernels):
#   cd <tinygrad> && DEV=CPU PARALLEL=0 python3 <repo>/tests/parity/gen_kernel_goldens.py > <repo>/tests/data/kernel_goldens.txt
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
import os, sys
os.environ.setdefault("DEV", "CPU")
os.environ.setdefault("PARALLEL", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dataclasses import replace
from golden_gen import kernel_programs, run_programs, info_line, run_lines, capture_first_runs, emulate
from uop_codec import enc_graph
from tinygrad import Device
from tinygrad.uop.ops import UOp, Ops
import tinygrad.engine.realize as R
import tinygrad.codegen as C
from tinygrad.renderer.llvmir import CPULLVMRenderer
from tinygrad.renderer import Estimates

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

def on_run(k, before, vals, var_vals):
  k["run"]["emu"] = {r: emulate(k[r]["uops"], before, vals, k[r]["global"]) for r in ("clang", "llvm")}
capture_first_runs(by_key, on_run)

programs = kernel_programs()
def begin(name, opts): current_program[0], forced_opts[0] = name, opts
skipped = run_programs(programs, kernels, begin)

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
  print("\n".join(run_lines(run)))
  for r, emu in run["emu"].items():
    if isinstance(emu, str): print(f"# emu {r} failed: {emu}")
    else: print(f"emu {r} " + " ".join(x or "-" for x in emu))
