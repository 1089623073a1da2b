// Port of tinygrad/schedule/__init__.py: turns the big SINK of CALLs made by tensor.py's transform_to_call into a
// LINEAR of kernel CALLs (create_schedule, the schedule cache, memory planning) plus the bound variable values.
#pragma once
#include <map>
#include <string>

#include "lib/uop/uop.h"
#include "lib/uop/upat.h"

namespace tg {

struct LinearWithVars {
  UOp linear;
  std::map<std::string, pyint> var_vals;
};

// big_sink = output of tensor.py's transform_to_call. Runs in a trace context named "Schedule N Kernels".
LinearWithVars create_linear_with_vars(const UOp& big_sink);

// engine/realize.py's pm_flatten_linear (defined here, used by the realize engine).
const PatternMatcher& pm_flatten_linear();

// the kernel dependency graph of a kernel graph (get_kernel_graph's SINK) linearized into LINEAR(CALL...)
UOp create_schedule(const UOp& sched_sink);
// the matchers of schedule/__init__.py
const PatternMatcher& pm_post_sched_cache();     // ctx: PostSchedCtx (new buffers, the LINEAR call's args)
const PatternMatcher& pm_resolve_linear_call();  // + pm_flatten_linear
const PatternMatcher& pm_schedule();             // SINK -> LINEAR (lower_sink_to_linear with the schedule cache)
const PatternMatcher& pm_copy_from_store();
using PostSchedCtx = std::pair<UOpMap<UOp>, std::vector<UOp>>;

}  // namespace tg
