// Port of tinygrad/uop/render.py: UOp -> python-like expression text (UOp.render), used by the symbolic tests and
// for labels in traces.
#pragma once
#include <optional>
#include <string>

#include "lib/uop/upat.h"

namespace tg {

using RenderMap = UOpMap<std::string>;
using StringMatcher = BasicPatternMatcher<std::optional<std::string>>;
const StringMatcher& renderer();

}  // namespace tg
