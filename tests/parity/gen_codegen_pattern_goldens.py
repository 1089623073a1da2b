#!/usr/bin/env python3
# Regenerates tests/data/codegen_pattern_goldens.txt: the structure of every rule's UPat, in order, for the reference's
# codegen matchers that lib/codegen ports (test_codegen_patterns.cpp compares), plus the code_for_op keys of the CPU
# renderers (the op sets the decomposition matchers are built for).
# Run from a checkout of tinygrad a9069c17:  cd <tinygrad> && python3 <this file> > <repo>/tests/data/codegen_pattern_goldens.txt
import sys, os
os.environ.setdefault("DEV", "CPU")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_gen import by_name, print_matchers
from tinygrad.uop.ops import UPat, Ops, GroupOp
import tinygrad.codegen as C
from tinygrad.codegen import simplify as S, gpudims as G
from tinygrad.codegen.late import gater as GA, coalesce as CO
from tinygrad.codegen.decomp import dtype as DD, op as DO, transcendental as DT
from tinygrad.schedule.rangeify import pm_mops
from tinygrad.renderer.cstyle import ClangRenderer
from tinygrad.renderer.llvmir import CPULLVMRenderer
from tinygrad.helpers import Target


clang_ops = tuple(ClangRenderer(Target("CPU", "CLANG", "x86_64,native")).code_for_op.keys())
llvm_ops = tuple(CPULLVMRenderer(Target("CPU", "LLVM", "x86_64,native")).code_for_op.keys())
# every op a renderer could have natively: all the optional branches of the decomposition tables
every_op = tuple(sorted(GroupOp.ALU | {Ops.THREEFRY}, key=lambda o: o.value))
matchers = {
  **by_name(S, "pm_flatten_range pm_simplify_ranges pm_split_ranges pm_reduce_unparented pm_reduce_collapse "
               "pm_reduce_load_collapse pm_reduce_simplify pm_load_collapse"),
  **by_name(G, "pm_add_gpudims"), **by_name(GA, "pm_move_gates_from_index"), **by_name(CO, "indexing_simplify pm_simplify_add_image"),
  **by_name(DD, "pm_dtype_decomps pm_float_decomp"), "pm_mops": pm_mops,
  **by_name(C, "pm_number_params expander2 pm_wmma_add pm_expand_broadcast ew_devectorizer devectorizer2 pm_reduce_local "
               "pm_add_loads pm_add_local_buffers pm_cast_float_alu pm_implicit_barriers pm_casted_consts"),
}
for rn, ops in (("clang", clang_ops), ("llvm", llvm_ops), ("every", every_op), ("none", ())):
  matchers[f"get_simplifying_rewrite_patterns[{rn}]"] = DO.get_simplifying_rewrite_patterns(ops)
  for dfi in (True, False): matchers[f"get_late_rewrite_patterns[{rn},{int(dfi)}]"] = DO.get_late_rewrite_patterns(ops, dfi)
  for force in (False, True): matchers[f"get_transcendental_patterns[{rn},{int(force)}]"] = DT.get_transcendental_patterns(ops, force)

print("# rule patterns of the reference's codegen matchers, in order (tests/parity/gen_codegen_pattern_goldens.py)")
for rn, ops in (("clang", clang_ops), ("llvm", llvm_ops), ("every", every_op)): print(f"ops {rn} {','.join(o.name for o in ops)}")
print_matchers(None, matchers)
