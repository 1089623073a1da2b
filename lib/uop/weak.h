// Port of tinygrad/uop/weak.py: committing weak dtypes (weakint/weakfloat) to real widths.
#pragma once
#include "lib/uop/upat.h"

namespace tg {
DType default_dtype(const UOp& u);
UOp commit_weak(const UOp& s, DType dt);
const PatternMatcher& pm_cast_weak();
const PatternMatcher& pm_commit_weak();
const PatternMatcher& pm_lower_weak();
const PatternMatcher& pm_lower_index_dtype();
}  // namespace tg
