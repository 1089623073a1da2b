// Port of tinygrad/uop/movement.py: matchers that strictly clean up movement ops.
#pragma once
#include "lib/uop/upat.h"

namespace tg {
const PatternMatcher& mop_cleanup();
}  // namespace tg
