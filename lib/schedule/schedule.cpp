#include "lib/schedule/schedule.h"

#include "lib/helpers.h"

namespace tg {

LinearWithVars create_linear_with_vars(const UOp&) { throw Error("create_linear_with_vars: not yet"); }

const PatternMatcher& pm_flatten_linear() {
  static const PatternMatcher pm("pm_flatten_linear", {});
  return pm;
}

}  // namespace tg
