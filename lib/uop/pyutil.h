// Small helpers that reproduce python semantics the rules depend on (sum() starting at the int 0, set iteration
// order of small ints). Internal to lib/uop.
#pragma once
#include <vector>

#include "lib/uop/uop.h"

namespace tg::py {

// sum(items) + tail, with python's int 0 start: the first item becomes ADD(0, item)
UOp sum(const std::vector<UOp>& items);  // items must be non-empty
UOp sum_plus(const std::vector<UOp>& items, const UOp& tail);
// CPython's iteration order of a set of (non-negative) ints built by inserting `values` in order
std::vector<pyint> set_order(const std::vector<pyint>& values);
// python's int floor division / mod
inline pyint fdiv(pyint a, pyint b) { return ::tg::floordiv(a, b); }
inline pyint fmod(pyint a, pyint b) { return ::tg::floormod(a, b); }
inline pyint iabs(pyint a) { return a < 0 ? -a : a; }

}  // namespace tg::py
