#include "lib/schedule/multi.h"

#include "lib/helpers.h"
#include "lib/uop/kernel_info.h"

namespace tg {

// rewrite into FUNCTION calls explicitly (value-producing). On one device the body and args never carry UNSHARD.
static UOp rewrite_into_function(const UOp& call) {
  if (auto* ci = call.arg().as<CallInfo>(); ci && ci->precompile) return UOp();
  UOp new_body = graph_rewrite(call.src(0), multi_pm(), {.name = "subcall"});
  if (new_body.op() != Ops::TUPLE) throw Error("FUNCTION body must be a TUPLE after multi_pm");
  for (const UOp& s : new_body.src())
    if (s.op() == Ops::UNSHARD) throw Error("multi-device (sharded) kernels are not ported");
  std::vector<UOp> src{new_body};
  for (size_t i = 1; i < call.nsrc(); i++) src.push_back(call.src(i));
  return call.with_src(src);
}

const PatternMatcher& multi_pm() {
  static const PatternMatcher pm(
      "multi_pm",
      {
          // param_to_multi: only PARAMs with an axis (sharded over devices) change; multi-device is not ported
          TG_RULE(UPat(Ops::PARAM).named("p"),
                  [](U p) -> UOp {
                    if (!p.param_arg()->has_axis) return UOp();
                    throw Error("multi-device (sharded) kernels are not ported");
                  }),
          // resolve TUPLE+GETTUPLE (needed in multi)
          TG_RULE(UPat(Ops::GETTUPLE).src(UPat(Ops::TUPLE).named("t")).named("g"),
                  [](U g, U t) { return t.src((size_t)g.arg().as_int()); }),
          // rewrite into FUNCTION calls explicitly for UNSHARD (value-producing)
          TG_RULE(UPat(Ops::FUNCTION).named("call"), [](U call) { return rewrite_into_function(call); }),
      });
  return pm;
}

}  // namespace tg
