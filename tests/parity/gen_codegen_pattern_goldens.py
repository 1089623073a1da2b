#!/usr/bin/env python3
# Regenerates tests/parity/codegen_pattern_goldens.txt: the structure of every rule's UPat, in order, for the reference's
# codegen matchers that lib/codegen ports (test_codegen_patterns.cpp compares), plus the code_for_op keys of the CPU
# renderers (the op sets the decomposition matchers are built for).
# Run from a checkout of tinygrad a9069c17:  cd <tinygrad> && python3 <this file> > <repo>/tests/parity/codegen_pattern_goldens.txt
import sys, os
os.environ.setdefault("DEV", "CPU")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
from dataclasses import replace
from uop_codec import enc_arg, dtype_attr
from tinygrad.uop.ops import UPat, Ops, GroupOp
import tinygrad.codegen as C
from tinygrad.codegen import simplify as S, gpudims as G
from tinygrad.codegen.late import gater as GA, coalesce as CO
from tinygrad.codegen.decomp import dtype as DD, op as DO, transcendental as DT
from tinygrad.schedule.rangeify import pm_mops
from tinygrad.renderer.cstyle import ClangRenderer
from tinygrad.renderer.llvmir import CPULLVMRenderer
from tinygrad.helpers import Target

def canon(p: UPat) -> str:
  if p.is_any: return "any(" + ",".join(canon(x) for x in p.src[0]) + ")"
  ops = "*" if p.op is None else "|".join(sorted(o.name for o in p.op))
  dt = "*" if p.match_dtype is None else "|".join(sorted(dtype_attr(d) for d in p.match_dtype))
  arg = "*" if p.arg is None else enc_arg(p.arg)
  tag = "*" if p.match_tag is None else "|".join(sorted(str(t) for t in p.match_tag))
  src = p._in_src
  if src is None: s = "-"
  elif isinstance(src, UPat): s = "R(" + canon(src) + ")"
  elif isinstance(src, list): s = "L(" + ",".join(canon(x) for x in src) + ")"
  else: s = "T(" + ",".join(canon(x) for x in src) + ")"
  return f"P[{ops};{dt};{arg};{p.name or ''};{tag};{'strict' if p.strict_length else 'any'};{s}]"

clang_ops = tuple(ClangRenderer(Target("CPU", "CLANG", "x86_64,native")).code_for_op.keys())
llvm_ops = tuple(CPULLVMRenderer(Target("CPU", "LLVM", "x86_64,native")).code_for_op.keys())
# every op a renderer could have natively: all the optional branches of the decomposition tables
every_op = tuple(sorted(GroupOp.ALU | {Ops.THREEFRY}, key=lambda o: o.value))
matchers = {
  "pm_flatten_range": S.pm_flatten_range, "pm_simplify_ranges": S.pm_simplify_ranges, "pm_split_ranges": S.pm_split_ranges,
  "pm_reduce_unparented": S.pm_reduce_unparented, "pm_reduce_collapse": S.pm_reduce_collapse,
  "pm_reduce_load_collapse": S.pm_reduce_load_collapse, "pm_reduce_simplify": S.pm_reduce_simplify,
  "pm_load_collapse": S.pm_load_collapse, "pm_add_gpudims": G.pm_add_gpudims, "pm_move_gates_from_index": GA.pm_move_gates_from_index,
  "indexing_simplify": CO.indexing_simplify, "pm_simplify_add_image": CO.pm_simplify_add_image,
  "pm_dtype_decomps": DD.pm_dtype_decomps, "pm_float_decomp": DD.pm_float_decomp, "pm_mops": pm_mops,
  "pm_number_params": C.pm_number_params, "expander2": C.expander2, "pm_wmma_add": C.pm_wmma_add,
  "pm_expand_broadcast": C.pm_expand_broadcast, "ew_devectorizer": C.ew_devectorizer, "devectorizer2": C.devectorizer2,
  "pm_reduce_local": C.pm_reduce_local, "pm_add_loads": C.pm_add_loads, "pm_add_local_buffers": C.pm_add_local_buffers,
  "pm_cast_float_alu": C.pm_cast_float_alu, "pm_implicit_barriers": C.pm_implicit_barriers, "pm_casted_consts": C.pm_casted_consts,
}
for rn, ops in (("clang", clang_ops), ("llvm", llvm_ops), ("every", every_op), ("none", ())):
  matchers[f"get_simplifying_rewrite_patterns[{rn}]"] = DO.get_simplifying_rewrite_patterns(ops)
  for dfi in (True, False): matchers[f"get_late_rewrite_patterns[{rn},{int(dfi)}]"] = DO.get_late_rewrite_patterns(ops, dfi)
  for force in (False, True): matchers[f"get_transcendental_patterns[{rn},{int(force)}]"] = DT.get_transcendental_patterns(ops, force)

print("# rule patterns of the reference's codegen matchers, in order (tests/parity/gen_codegen_pattern_goldens.py)")
for rn, ops in (("clang", clang_ops), ("llvm", llvm_ops), ("every", every_op)): print(f"ops {rn} {','.join(o.name for o in ops)}")
for name, pm in matchers.items():
  print(f"matcher {name} {len(pm.patterns)}")
  for p, _ in pm.patterns: print(canon(p))
