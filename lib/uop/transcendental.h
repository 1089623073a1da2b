// Port of the parts of tinygrad/codegen/decomp/transcendental.py the symbolic rules need (xpow).
#pragma once
#include "lib/uop/uop.h"

namespace tg {
UOp xpow(const UOp& base, const UOp& exponent);
}  // namespace tg
