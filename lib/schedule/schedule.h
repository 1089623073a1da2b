// Port of tinygrad/schedule/__init__.py: turns the big SINK of CALLs made by tensor.py's transform_to_call into a
// LINEAR of kernel CALLs (create_schedule, the schedule cache, memory planning) plus the bound variable values.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "lib/helpers.h"
#include "lib/uop/uop.h"
#include "lib/uop/upat.h"

namespace tg {

struct LinearWithVars {
  UOp linear;
  std::map<std::string, pyint> var_vals;
};

extern ContextVar SCACHE;  // the schedule cache (1: a function scheduled before is served from the cache)

// big_sink = output of tensor.py's transform_to_call. Runs in a trace context named "Schedule N Kernels".
LinearWithVars create_linear_with_vars(const UOp& big_sink);

// THE JIT HOOK (engine/realize.py's `capturing` list and the CAPTURING ContextVar). A TinyJit under capture pushes
// itself here; while the list is not empty and CAPTURING is set, create_linear_with_vars hands the schedule (after the
// COPY kernels, before memory planning) to capturing()[0]->add_linear and returns an empty LINEAR with the var_vals.
// The JIT itself is not ported yet.
class LinearCapturer {
 public:
  virtual ~LinearCapturer() = default;
  virtual void add_linear(const UOp& linear, const std::map<std::string, pyint>& var_vals) = 0;
};
std::vector<LinearCapturer*>& capturing();
extern ContextVar CAPTURING;

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
