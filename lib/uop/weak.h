// Port of tinygrad/uop/weak.py: committing weak dtypes (weakint/weakfloat) to real widths.
#pragma once
#include <unordered_map>

#include "lib/uop/nodemap.h"
#include "lib/uop/upat.h"

namespace tg {
// the ctx of pm_lower_index_dtype (the reference's dict): each weak src's lowering, and the memo of the pm_lower_weak
// rewrites behind them
struct LowerIndexCtx {
  UOpMap<UOp> lowered;
  NodeMap<UOp> memo{1024};  // the rewrites of a matmul kernel's weak index arithmetic fill ~500 entries
};
DType default_dtype(const UOp& u);
UOp commit_weak(const UOp& s, DType dt);
const PatternMatcher& pm_cast_weak();
const PatternMatcher& pm_commit_weak();
const PatternMatcher& pm_lower_weak();
const PatternMatcher& pm_lower_index_dtype();
}  // namespace tg
