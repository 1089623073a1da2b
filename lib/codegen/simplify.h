// Port of tinygrad/codegen/simplify.py: range flattening, merging and splitting, and reduce simplification (unparented
// ranges, reduce collapse for aranges and tensor indexing).
#pragma once
#include "lib/codegen/helpers.h"
#include "lib/uop/rewrite.h"

namespace tg {

// UOp.ended_ranges: the ranges a node closes (REDUCE/END/STAGE/... srcs after range_start, AFTER's srcs' ones)
std::vector<UOp> ended_ranges(const UOp& u);

const PatternMatcher& pm_flatten_range();
const PatternMatcher& pm_simplify_ranges();  // ctx: UOpDict<UOp>
const PatternMatcher& pm_split_ranges();     // ctx: UOpDict<UOp>
const PatternMatcher& pm_reduce_unparented();
const PatternMatcher& pm_reduce_collapse();
const PatternMatcher& pm_reduce_load_collapse();
const PatternMatcher& pm_reduce_simplify();
const PatternMatcher& pm_load_collapse();

bool no_range(const UOp& u);
bool no_load(const UOp& u);

}  // namespace tg
