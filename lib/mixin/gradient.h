// Port of tinygrad/mixin/gradient.py (pm_gradient, reduce_gradient, compute_gradient) and OpMixin.gradient
// (mixin/op.py). The local gradient of each op is a switch on the op in the order of the reference's pm_gradient
// table (it is applied with PatternMatcher.rewrite outside any graph_rewrite there, so it never shows in a trace).
// Gradients through FUNCTION/CALL (call_gradient, function.py) come with the Tensor's function support.
#pragma once
#include <vector>

#include "lib/uop/uop.h"

namespace tg {

// {node: gradient of root w.r.t. node} for every node on a path from root to a target (DETACH stops the flow)
UOpMap<UOp> compute_gradient(const UOp& root, const UOp& root_grad, const UOpSet& targets);
// OpMixin.gradient: d(self)/d(target) for each target; `gradient` defaults to 1 and then self must be a scalar.
// Errors: non-float self or targets, weak-dtype targets.
std::vector<UOp> gradient(const UOp& self, const std::vector<UOp>& targets, const UOp& grad = UOp());

}  // namespace tg
