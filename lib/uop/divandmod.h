// Port of tinygrad/uop/divandmod.py: general floordiv/floormod folding of index expressions.
#pragma once
#include "lib/uop/upat.h"

namespace tg {
UOp fold_divmod_general(const UOp& d);
const PatternMatcher& div_and_mod_symbolic();
}  // namespace tg
