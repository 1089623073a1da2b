#!/usr/bin/env python3
# Regenerates tests/parity/pattern_goldens.txt: the structure of every rule's UPat, in order, for the reference's
# matchers that lib/uop ports. The C++ DSL must build exactly these patterns (test_patterns.cpp compares).
# Run from a checkout of tinygrad a9069c17:  cd <tinygrad> && python3 <this file> > <repo>/tests/parity/pattern_goldens.txt
import sys, os, itertools
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
from uop_codec import enc_arg, dtype_attr
from tinygrad.uop.ops import UPat
from tinygrad.uop import symbolic as S, divandmod as D, movement as M, weak as W

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

matchers = {"pm_data_invalid": S.pm_data_invalid, "pm_remove_invalid": S.pm_remove_invalid,
            "symbolic_simple": S.symbolic_simple, "commutative": S.commutative, "symbolic": S.symbolic,
            "pm_simplify_valid": S.pm_simplify_valid, "pm_drop_and_clauses": S.pm_drop_and_clauses,
            "pm_move_where_on_load": S.pm_move_where_on_load, "pm_clean_up_group_sink": S.pm_clean_up_group_sink,
            "sym": S.sym, "div_and_mod_symbolic": D.div_and_mod_symbolic, "mop_cleanup": M.mop_cleanup,
            "pm_cast_weak": W.pm_cast_weak, "pm_commit_weak": W.pm_commit_weak, "pm_lower_weak": W.pm_lower_weak,
            "pm_lower_index_dtype": W.pm_lower_index_dtype}
print("# rule patterns of the reference's matchers, in order (tests/parity/gen_pattern_goldens.py)")
for name, pm in matchers.items():
  print(f"matcher {name} {len(pm.patterns)}")
  for p, _ in pm.patterns: print(canon(p))
