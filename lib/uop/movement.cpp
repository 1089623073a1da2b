#include "lib/uop/movement.h"

namespace tg {

static bool shapes_same(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (!a[i].same(b[i])) return false;
  return true;
}

const PatternMatcher& mop_cleanup() {
  static const PatternMatcher pm(
      "mop_cleanup",
      {
          // merge adjacent RESHAPES
          TG_RULE(UPat(Ops::RESHAPE).src(UPat(Ops::RESHAPE).named("x2"), UPat()).named("x"),
                  [](U x, U x2) {
                    return x.with_src({x2.src(0), x.src(1)});
                  }),
          // remove noop RESHAPEs
          TG_RULE(UPat(Ops::RESHAPE).src(UPat().named("x2"), UPat()).named("x"),
                  [](U x, U x2) { return x2.shape_opt() && shapes_same(x2.shape(), x.shape()) ? x2 : UOp(); }),
          // merge PERMUTEs
          TG_RULE(UPat(Ops::PERMUTE).src(UPat(Ops::PERMUTE).named("x2")).named("x"),
                  [](U x, U x2) {
                    std::vector<Arg> a;
                    for (const Arg& i : x.arg().items()) a.push_back(x2.arg()[(size_t)i.as_int()]);
                    return x2.with_arg(Arg::tuple(a));
                  }),
          // remove noop PERMUTEs
          TG_RULE(UPat(Ops::PERMUTE).named("x"),
                  [](U x) {
                    const auto& items = x.arg().items();
                    for (size_t i = 0; i < items.size(); i++)
                      if (items[i].as_int() != (pyint)i) return UOp();
                    return x.src(0);
                  }),
          // STACK on INDEX CONST
          TG_RULE(UPat(Ops::STACK).src_all(UPat(Ops::INDEX).src(UPat::var("src"), UPat(Ops::CONST))).named("stk"),
                  [](U src, U stk) {
                    if (!shapes_same(stk.shape(), src.shape())) return UOp();
                    for (size_t i = 0; i < stk.nsrc(); i++)
                      if (stk.src(i).src(1).val().is_invalid() || stk.src(i).src(1).val().as_int() != (pyint)i)
                        return UOp();
                    return src;
                  }),
          // const INDEX into STACK is src
          TG_RULE(UPat(Ops::INDEX).src(UPat(Ops::STACK).named("a"), UPat::cvar("i")).named("idx").any_len(),
                  [](U a, U i, U idx) {
                    UOp s = a.src((size_t)i.val().as_int());
                    if (idx.nsrc() <= 2) return s;
                    std::vector<UOp> rest(idx.src().begin() + 2, idx.src().end());
                    return s.index(rest);
                  }),
          // INDEX on INDEX is INDEX
          TG_RULE(UPat(Ops::INDEX).src(UPat(Ops::INDEX).named("idx1").any_len()).any_len().named("idx2"),
                  [](U idx1, U idx2) {
                    std::vector<UOp> all(idx1.src().begin() + 1, idx1.src().end());
                    all.insert(all.end(), idx2.src().begin() + 1, idx2.src().end());
                    for (const UOp& x : all)
                      if (!x.shape().empty()) return UOp();
                    return idx1.src(0).index(all);
                  }),
          // INDEX on shaped INDEX
          TG_RULE(UPat(Ops::INDEX)
                      .src(UPat(Ops::INDEX).src(UPat::var("buf"), UPat::var("idx1_arg")))
                      .any_len()
                      .named("idx2"),
                  [](U buf, U idx1_arg, U idx2) {
                    std::vector<UOp> rest(idx2.src().begin() + 1, idx2.src().end());
                    if (idx1_arg.shape().size() != rest.size()) return UOp();
                    return buf.index(idx1_arg.index(rest));
                  }),
      });
  return pm;
}

}  // namespace tg
