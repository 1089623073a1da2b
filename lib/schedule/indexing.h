// Port of tinygrad/schedule/indexing.py: movement ops become index math on ranges (rangeify). run_rangeify decides
// which nodes are realized (STAGE) and gives every node its input and output ranges; pm_apply_rangeify rewrites the
// tensor graph into ranged form. apply_movement_op is the definition of the movement ops as index math (codegen uses
// it too, through pm_mops).
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "lib/helpers.h"
#include "lib/uop/kernel_info.h"
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
// apply_movement_op for a RESHAPE over constant indices, an EXPAND or a PERMUTE, read from the node and its cached
// shapes (no MArg is built): what apply_movement_op(mop.op(), mop.src(0).shape(), marg(mop), rngs) gives, or nullopt
// for the other cases
std::optional<std::vector<UOp>> apply_movement_op_direct(const UOp& mop, const std::vector<UOp>& rngs);
// a PERMUTE's argsort: the output position of each input dim (its input ranges are the output ranges in this order)
std::vector<size_t> permute_argsort(const Arg& perm);
// the RESHAPE index math: out ranges (urngs.src, PLACEHOLDER ranges) -> in ranges; memoized like functools.cache, so
// its "reshape" rewrite step shows only the first time a (shapes, ranges) key is seen in the process
UOp apply_reshape(const Shape& in_shape, const Shape& out_shape, const UOp& urngs);

extern ContextVar PCONTIG;  // partial contiguous in rangeify

struct IndexingContext {
  // realize_map: None (realize all, decided later) or the realized axes; insertion order is not observable
  UOpMap<std::optional<std::vector<int64_t>>> realize_map;
  UOpSet non_removable;
  // range_map: node -> (input ranges, output ranges)
  UOpMap<std::pair<std::vector<UOp>, std::vector<UOp>>> range_map;
  int64_t range_idx = 0;
  UOp new_range(const sint& s, AxisType axistype = AxisType::WEAK);
};

// ops that are always contiguous (never get a STAGE)
bool always_contiguous(Ops op);
// the srcs of a node that carry data (the rest are shape/bound/index args)
std::vector<UOp> data_srcs(Ops op, std::span<const UOp> src);
std::vector<UOp> broadcast_rngs(const UOp& x, const UOp& src, const std::vector<UOp>& rngs);

const PatternMatcher& pm_generate_realize_map();  // ctx: IndexingContext
const PatternMatcher& pm_apply_rangeify();        // ctx: IndexingContext
const PatternMatcher& pm_fix_deviceless();        // ctx: Arg (the sink's device)

UOp run_rangeify(const UOp& tsink, bool debug = false);

// BufferizeOpts as an Arg
inline Arg bufferize_opts(Arg device, AddrSpace addrspace = AddrSpace::GLOBAL, bool removable = true) {
  return BufferizeOpts(std::move(device), addrspace, removable).to_arg();
}

}  // namespace tg
