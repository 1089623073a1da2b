#!/usr/bin/env python3
# Regenerates tests/data/schedule_pattern_goldens.txt: the structure of every rule's UPat, in order, for the
# reference's scheduler matchers that lib/schedule ports (test_schedule_patterns.cpp compares). multi_pm is left out:
# lib/schedule/multi.cpp keeps only its one-device rules.
# Run from a checkout of tinygrad a9069c17:
#   cd <tinygrad> && python3 <this file> > <repo>/tests/data/schedule_pattern_goldens.txt
import sys, os
os.environ.setdefault("DEV", "CPU")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_gen import by_name, print_matchers
from tinygrad.uop.ops import UPat
import tinygrad.schedule as S
import tinygrad.schedule.rangeify as RF
import tinygrad.schedule.indexing as IX
import tinygrad.engine.realize as ER


matchers = {
  **by_name(RF, "pm_fold_moved_after pm_mops earliest_rewrites pm_gate_substitute pm_const_buffer_folding pm_remove_bufferize "
                "pm_no_indexing_calls pm_limit_bufs pm_flatten_bufferize pm_add_buffers to_define_global rangeify_codegen "
                "pm_add_param_range_tags split_kernels pm_copy_to_store"),
  **by_name(IX, "pm_generate_realize_map pm_apply_rangeify pm_fix_deviceless"),
  **by_name(S, "pm_post_sched_cache pm_resolve_linear_call pm_schedule pm_copy_from_store"),
  **by_name(ER, "pm_flatten_linear"),
}
print_matchers("# rule patterns of the reference's scheduler matchers, in order (tests/parity/gen_schedule_pattern_goldens.py)", matchers)
