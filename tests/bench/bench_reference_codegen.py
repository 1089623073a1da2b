#!/usr/bin/env python3
# Times the reference (tinygrad a9069c17) on the kernel ASTs of tests/data/codegen_goldens.txt, what bench_codegen
# runs: full_rewrite_to_sink + ProgramInfo.from_sink + linearize/line_rewrite + render (do_to_program without compiling),
# with ClangRenderer and CPULLVMRenderer, and full_rewrite_to_sink alone.
# cd <tinygrad checkout> && PYTHONPATH=. python3 <repo>/tests/bench/bench_reference_codegen.py [PASSES]
# Pass 1 is cold (functools caches and UPat compilation empty); the best later pass is the warm number.
import sys, os, time
os.environ.setdefault("DEV", "CPU")
os.environ.setdefault("NUM_CPU_THREADS", "8")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "parity"))
sys.path.insert(0, os.getcwd())
from uop_codec import pooled_records
from tinygrad import dtypes
from tinygrad.uop.ops import UOp, Ops
from tinygrad.helpers import Target
import tinygrad.codegen as C
from tinygrad.renderer.cstyle import ClangRenderer
from tinygrad.renderer.llvmir import CPULLVMRenderer

def load_asts(path):
  # CONST args are the dtype's canonical const (ConstFloat for floats), as UOp.const makes them
  def const_arg(arg, dtype): return dtype.const(arg) if isinstance(arg, (int, float, bool)) else arg
  return [pool[int(line[5:])] for line, pool in pooled_records(path, "kernel ", const_arg) if line.startswith("ast @")]

asts = load_asts(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "codegen_goldens.txt"))
clang = ClangRenderer(Target("CPU", "CLANG", "x86_64,native"))
llvm = CPULLVMRenderer(Target("CPU", "LLVM", "x86_64,native"))

def to_program_no_compile(ast, ren):
  sink = C.full_rewrite_to_sink(ast, ren, optimize=ast.tag is None)
  info = C.ProgramInfo.from_sink(sink, ren.target)
  lst = C.line_rewrite(C.linearize(sink), C.pm_linearize_cleanups)
  return info, ren.render(lst)

passes = int(sys.argv[1]) if len(sys.argv) > 1 else 3
for name, fn in (("to_program clang", lambda a: to_program_no_compile(a, clang)), ("to_program llvm", lambda a: to_program_no_compile(a, llvm)),
                 ("full_rewrite_to_sink clang", lambda a: C.full_rewrite_to_sink(a, clang, optimize=a.tag is None))):
  times = []
  for _ in range(passes):
    t0 = time.perf_counter()
    for a in asts: fn(a)
    times.append(time.perf_counter() - t0)
  warm = min(times[1:] or times)
  print(f"reference {name}: {len(asts)} kernels, seconds per pass: " + ", ".join(f"{t:.3f}" for t in times) +
        f"  (warm {warm*1e3/len(asts):.2f} ms per kernel)")
