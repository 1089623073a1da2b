#!/usr/bin/env python3
# Regenerates tests/data/pattern_goldens.txt: the structure of every rule's UPat, in order, for the reference's
# matchers that lib/uop ports. The C++ DSL must build exactly these patterns (test_patterns.cpp compares).
# Run from a checkout of tinygrad a9069c17:  cd <tinygrad> && python3 <this file> > <repo>/tests/data/pattern_goldens.txt
import sys, os, itertools
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_gen import by_name, print_matchers
from tinygrad.uop.ops import UPat
from tinygrad.uop import symbolic as S, divandmod as D, movement as M, weak as W


matchers = {**by_name(S, "pm_data_invalid pm_remove_invalid symbolic_simple commutative symbolic pm_simplify_valid "
                        "pm_drop_and_clauses pm_move_where_on_load pm_clean_up_group_sink sym"),
            **by_name(D, "div_and_mod_symbolic"), **by_name(M, "mop_cleanup"),
            **by_name(W, "pm_cast_weak pm_commit_weak pm_lower_weak pm_lower_index_dtype")}
print_matchers("# rule patterns of the reference's matchers, in order (tests/parity/gen_pattern_goldens.py)", matchers)
