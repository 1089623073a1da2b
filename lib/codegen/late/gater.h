// Port of tinygrad/codegen/late/gater.py: the WHERE(gate, idx, Invalid) of an INDEX becomes the gate of its LOAD
// (with a 0 alt value) or STORE.
#pragma once
#include "lib/uop/rewrite.h"

namespace tg {
const PatternMatcher& pm_move_gates_from_index();
}  // namespace tg
