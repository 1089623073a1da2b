// Port of tinygrad/codegen/decomp/op.py: decompositions of the ops a renderer lacks (its code_for_op keys), picked
// per op set and cached like the reference's functools.cache.
#pragma once
#include <utility>
#include <vector>

#include "lib/renderer/renderer.h"

namespace tg {

std::pair<pyint, pyint> magicgu(pyint vmax, pyint d);
UOp fast_idiv(const Renderer& ren, const UOp& x, pyint d, bool dont_cast = false);  // null when it can't
UOp threefry2x32(const UOp& x, const UOp& key);
const PatternMatcher& get_simplifying_rewrite_patterns(const std::vector<Ops>& ops);
const PatternMatcher& get_late_rewrite_patterns(const std::vector<Ops>& ops, bool disable_fast_idiv);

}  // namespace tg
