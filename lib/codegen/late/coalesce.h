// Port of tinygrad/codegen/late/coalesce.py without images (IMAGE=0): valid simplification of INDEX
// (indexing_simplify), grouping scalar loads/stores into vector ones (memory_coalescing), and the half<->float rules of
// pm_simplify_add_image.
#pragma once
#include "lib/renderer/renderer.h"

namespace tg {
const PatternMatcher& indexing_simplify();
UOp memory_coalescing(const UOp& sink, const Renderer& ren);
const PatternMatcher& pm_simplify_add_image();
}  // namespace tg
