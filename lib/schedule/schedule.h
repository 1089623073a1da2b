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

}  // namespace tg
