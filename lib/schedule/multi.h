// Port of tinygrad/schedule/multi.py as far as one device needs it. multi_pm runs first in get_kernel_graph (and in
// codegen's full_rewrite_to_sink). On one device no value is sharded, so the rules that act on UNSHARD, MSELECT/MSTACK
// and multi-device COPY/ALLREDUCE never fire; what remains is resolving TUPLE+GETTUPLE and rewriting into FUNCTION
// bodies ("subcall"). A sharded PARAM (one with an axis) raises: real multi-device sharding and allreduce.py are out
// of scope.
#pragma once
#include "lib/uop/rewrite.h"

namespace tg {

const PatternMatcher& multi_pm();

}  // namespace tg
