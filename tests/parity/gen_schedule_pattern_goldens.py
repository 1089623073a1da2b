#!/usr/bin/env python3
# Regenerates tests/parity/schedule_pattern_goldens.txt: the structure of every rule's UPat, in order, for the
# reference's scheduler matchers that lib/schedule ports (test_schedule_patterns.cpp compares). multi_pm is left out:
# lib/schedule/multi.cpp keeps only its one-device rules.
# Run from a checkout of tinygrad a9069c17:
#   cd <tinygrad> && python3 <this file> > <repo>/tests/parity/schedule_pattern_goldens.txt
import sys, os
os.environ.setdefault("DEV", "CPU")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
from uop_codec import enc_arg, dtype_attr
from tinygrad.uop.ops import UPat
import tinygrad.schedule as S
import tinygrad.schedule.rangeify as RF
import tinygrad.schedule.indexing as IX
import tinygrad.engine.realize as ER

def canon(p: UPat) -> str:  # as in gen_codegen_pattern_goldens.py
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

matchers = {
  "pm_fold_moved_after": RF.pm_fold_moved_after, "pm_mops": RF.pm_mops, "earliest_rewrites": RF.earliest_rewrites,
  "pm_gate_substitute": RF.pm_gate_substitute, "pm_const_buffer_folding": RF.pm_const_buffer_folding,
  "pm_remove_bufferize": RF.pm_remove_bufferize, "pm_no_indexing_calls": RF.pm_no_indexing_calls,
  "pm_limit_bufs": RF.pm_limit_bufs, "pm_flatten_bufferize": RF.pm_flatten_bufferize, "pm_add_buffers": RF.pm_add_buffers,
  "to_define_global": RF.to_define_global, "rangeify_codegen": RF.rangeify_codegen,
  "pm_add_param_range_tags": RF.pm_add_param_range_tags, "split_kernels": RF.split_kernels,
  "pm_copy_to_store": RF.pm_copy_to_store, "pm_generate_realize_map": IX.pm_generate_realize_map,
  "pm_apply_rangeify": IX.pm_apply_rangeify, "pm_fix_deviceless": IX.pm_fix_deviceless,
  "pm_post_sched_cache": S.pm_post_sched_cache, "pm_resolve_linear_call": S.pm_resolve_linear_call,
  "pm_schedule": S.pm_schedule, "pm_copy_from_store": S.pm_copy_from_store, "pm_flatten_linear": ER.pm_flatten_linear,
}
print("# rule patterns of the reference's scheduler matchers, in order (tests/parity/gen_schedule_pattern_goldens.py)")
for name, pm in matchers.items():
  print(f"matcher {name} {len(pm.patterns)}")
  for p, _ in pm.patterns: print(canon(p))
