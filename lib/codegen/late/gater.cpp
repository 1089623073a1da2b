// this is a temporary intermediate step while we remove this index style (the reference's own note)
#include "lib/codegen/late/gater.h"

namespace tg {

static UOp move_where_load(const UOp& l, const UOp& a, const UOp& w) {
  UOp alt = a.is_invalid()                                         ? l.vconst_like(0)
            : a.op() == Ops::CONST                                 ? l.const_like(a.val())
            : a.op() == Ops::CAST && a.src(0).dtype() == l.dtype() ? a.src(0)
                                                                   : a.cast(l.dtype());
  return l.with_src({l.src(0), alt, l.src(2)}).cast(w.dtype());
}

static std::vector<UOp> mop_src(const UOp& mop, const UOp& idx) {
  std::vector<UOp> s{mop.src(0), idx};
  s.insert(s.end(), mop.src().begin() + 2, mop.src().end());
  return s;
}

const PatternMatcher& pm_move_gates_from_index() {
  static const PatternMatcher pm = [] {
    UPat inv = UPat().arg(Arg::invalid());
    UPat image_idx = UPat::var("buf").index(UPat::var("gate").where(UPat::var("idx_y"), inv),
                                            UPat::var("gate").where(UPat::var("idx_x"), inv));
    UPat mop = UPat(ops(Ops::INDEX, Ops::SHRINK))
                   .src(UPat(), UPat::var("gate").where(UPat::var("idx"), inv))
                   .named("mop")
                   .any_len();
    return PatternMatcher(
        "pm_move_gates_from_index",
        {
            // for image idx (must be first)
            TG_RULE(image_idx.load().named("l"),
                    [](U buf, U gate, U idx_y, U idx_x, U l) {
                      return buf.index(std::vector<UOp>{idx_y, idx_x}).load({l.vconst_like(0), gate});
                    }),
            TG_RULE(image_idx.store(UPat::var("data")),
                    [](U buf, U gate, U idx_y, U idx_x, U data) {
                      return buf.index(std::vector<UOp>{idx_y, idx_x}).store(data, gate);
                    }),
            // here we create the alt value for load to be 0s and remove the where Invalid
            TG_RULE(mop.load().named("l"),
                    [](U mop, U gate, U idx, U l) {
                      return mop.with_src(mop_src(mop, idx)).load({l.vconst_like(0), gate});
                    }),
            TG_RULE(mop.store(UPat::var("data")),
                    [](U mop, U gate, U idx, U data) { return mop.with_src(mop_src(mop, idx)).store(data, gate); }),
            // Where after gated load becomes alt value
            TG_RULE(
                UPat::var("gate")
                    .where(UPat().load(UPat(), UPat::var("gate", dtypes::bool_)).named("l").or_casted(), UPat::var("a"))
                    .named("w"),
                [](U l, U a, U w) { return move_where_load(l, a, w); }),
            TG_RULE(
                UPat::var("gate")
                    .where(UPat::var("a"),
                           UPat().load(UPat(), UPat::var("gate", dtypes::bool_).logical_not()).named("l").or_casted())
                    .named("w"),
                [](U l, U a, U w) { return move_where_load(l, a, w); }),
        });
  }();
  return pm;
}

}  // namespace tg
