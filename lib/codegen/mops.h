// The movement-op lowering codegen needs from the scheduler's modules (until lib/schedule ports them; then they move
// there): schedule/indexing.py's apply_movement_op and _apply_reshape (the index math of each movement op), and
// schedule/rangeify.py's pm_mops (movement ops on INDEX, and moved past AFTER/END).
#pragma once
#include <vector>

#include "lib/uop/rewrite.h"

namespace tg {

// UOp.marg of a movement op: RESHAPE/EXPAND a shape, PAD/SHRINK (a, b) pairs, PERMUTE/FLIP the tuple arg
struct MArg {
  Shape shape;
  std::vector<std::pair<sint, sint>> pairs;
  Arg tuple;
};
MArg marg(const UOp& mop);
// the ranges of a movement op's input given the ranges of its output
std::vector<UOp> apply_movement_op(Ops op, const Shape& in_shape, const MArg& arg, const std::vector<UOp>& rngs);
// the RESHAPE index math: out ranges (urngs.src, PLACEHOLDER ranges) -> in ranges; memoized like functools.cache, so
// its "reshape" rewrite step shows only the first time a (shapes, ranges) key is seen in the process
UOp apply_reshape(const Shape& in_shape, const Shape& out_shape, const UOp& urngs);
const PatternMatcher& pm_mops();

}  // namespace tg
