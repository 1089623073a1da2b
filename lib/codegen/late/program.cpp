#include "lib/codegen/late/program.h"

#include "lib/codegen/late/linearizer.h"
#include "lib/renderer/renderer.h"

namespace tg {

const LinePatternMatcher& pm_linearize_cleanups() {
  static const LinePatternMatcher pm("pm_linearize_cleanups", {
    // if statements are not allowed in the graph
    TG_RULE(UPat(ops(Ops::IF, Ops::ENDIF)), []() -> std::optional<LineRewrite> {
      throw Error("if not allowed in graph");
    }),
    // gated STORE becomes IF-STORE-ENDIF. this is the only use of IF-ENDIF
    TG_RULE(UPat(Ops::STORE).src(UPat(ops(Ops::INDEX, Ops::SHRINK)).or_casted(), UPat(),
                                 UPat().named("gate").dtype(dtypes::bool_)).named("u"),
            [](UOp u, UOp gate) -> std::optional<LineRewrite> {
              UOp st = u.with_src({u.src(0), u.src(1)});
              UOp mif(Ops::IF, dtypes::void_, {gate, u.src(0)});
              return LineRewrite{st, {mif, st, UOp(Ops::ENDIF, dtypes::void_, {mif})}};
            }),
  });
  return pm;
}

std::vector<UOp> line_rewrite(const std::vector<UOp>& lst, const LinePatternMatcher& pm, CtxRef ctx) {
  std::vector<UOp> newlst;
  UOpMap<UOp> replaced;
  for (const UOp& u : lst) {
    std::vector<UOp> src;
    src.reserve(u.nsrc());
    for (const UOp& x : u.src()) {
      auto it = replaced.find(x);
      src.push_back(it == replaced.end() ? x : it->second);
    }
    UOp nu = u.with_src(std::move(src));
    std::optional<LineRewrite> ret = pm.rewrite(nu, ctx);
    if (!ret) ret = LineRewrite{nu, {nu}};
    replaced[u] = ret->replaced;
    newlst.insert(newlst.end(), ret->lines.begin(), ret->lines.end());
  }
  return newlst;
}

std::vector<UOp> do_linearize(const UOp& sink) { return line_rewrite(linearize(sink), pm_linearize_cleanups()); }

std::string do_render(const Renderer& ren, const UOp& sink) { return ren.render(do_linearize(sink)); }

}  // namespace tg
