#!/usr/bin/env python3
# Regenerates tests/data/beam_goldens.txt: search.py's get_kernel_actions for every kernel AST of
# codegen_goldens.txt, with the CPU device's CPULLVMRenderer (NUM_CPU_THREADS=8), two levels deep: the actions valid on
# the kernel, and for the first three of them the actions valid after it.
#
#   cd <tinygrad a9069c17> && python3 <repo>/tests/parity/gen_beam_goldens.py <repo>/tests/data/codegen_goldens.txt \
#       <repo>/tests/data/beam_goldens.txt
#
# Format, per kernel of codegen_goldens.txt (same order and ids):
#   kernel <k> <program>
#   actions <path> <n> <i...>   path: "-" for the kernel itself, else the action indices applied ("12" or "12.40");
#                              then the indices (1-based, as get_kernel_actions keys) of the valid next actions
#   shape <path> <full_shape> <axis types>   the Scheduler after the path (e.g. "32,4,8 GLOBAL,UPCAST,REDUCE")
#   len <number of actions>     (once, first line)
import os, sys
os.environ["DEV"] = "CPU"
os.environ["NUM_CPU_THREADS"] = "8"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
from dataclasses import replace
from uop_codec import dec_node
from tinygrad import Device, dtypes
from tinygrad.uop.ops import UOp, Ops
from tinygrad.renderer.llvmir import CPULLVMRenderer
from tinygrad.codegen.opt.postrange import Scheduler
from tinygrad.codegen.opt import search

src_path, out_path = sys.argv[1], sys.argv[2]
ren = CPULLVMRenderer(replace(Device["CPU"].renderer.target, renderer="LLVM"))
assert ren.global_max == (8, 0, 0), ren.global_max

kernels, pool = [], []
for line in open(src_path):
  line = line.rstrip("\n")
  if line.startswith("+ "): pool.append(dec_node(line[2:], pool))
  elif line.startswith("kernel "):
    pool = []
    _, k, prog = line.split(" ", 2)
    kernels.append([k, prog, None])
  elif line.startswith("ast @"): kernels[-1][2] = pool[int(line[5:])]

def shape_line(path, s):
  fs = ",".join(x.render() if isinstance(x, UOp) else str(x) for x in s.full_shape)
  at = ",".join(t.name for t in s.axis_types)
  return f"shape {path} {fs} {at}"

out = [f"# goldens from tinygrad a9069c17: search.get_kernel_actions on the ASTs of codegen_goldens.txt (CPULLVMRenderer)",
       f"len {len(search.actions)}"]
for k, prog, ast in kernels:
  if ast is None or ast.tag is not None: continue
  s = Scheduler(ast, ren)
  s.convert_loop_to_global()
  out.append(f"kernel {k} {prog}")
  acts = search.get_kernel_actions(s, include_0=False)
  out.append(f"actions - {len(acts)} " + " ".join(str(i) for i in acts))
  out.append(shape_line("-", s))
  for i in list(acts)[:3]:
    s2 = acts[i]
    out.append(shape_line(str(i), s2))
    acts2 = search.get_kernel_actions(s2, include_0=False)
    out.append(f"actions {i} {len(acts2)} " + " ".join(str(j) for j in acts2))
open(out_path, "w").write("\n".join(out) + "\n")
print(f"wrote {len(kernels)} kernels to {out_path}")
