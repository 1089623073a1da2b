#include "lib/uop/weak.h"

#include <optional>

#include "lib/uop/rewrite.h"

namespace tg {

DType default_dtype(const UOp& u) {
  if (u.dtype() == dtypes::weakfloat) return dtypes::default_float();
  return u.overflows(dtypes::int32) ? dtypes::int64 : dtypes::int32;
}

// a CONST commits directly at dt (the value stays mathematical, emission truncates), a non-const src takes the cast
UOp commit_weak(const UOp& s, DType dt) { return s.op() == Ops::CONST ? UOp::const_(s.val(), dt) : s.cast(dt); }

// the root re-derives: a shift's dtype is its lhs's, so committing the lhs commits the node too
static UOp commit_srcs_at(const UOp& u, DType dt) {
  std::vector<UOp> src;
  src.reserve(u.nsrc());
  for (const UOp& s : u.src()) src.push_back(contains(dtypes::weaks, s.dtype()) ? commit_weak(s, dt) : s);
  return u.replace({}, DType(), src);
}

static bool any_weak_src(const UOp& u) {
  for (const UOp& s : u.src())
    if (contains(dtypes::weaks, s.dtype())) return true;
  return false;
}

static UOp commit_weak_srcs(const UOp& u) {
  bool any_weak = false;
  for (const UOp& s : u.src()) any_weak |= contains(dtypes::weaks, s.dtype());
  if (!any_weak) return UOp();  // the usual case: nothing built
  std::vector<DType> ds;
  for (const UOp& s : u.src()) ds.push_back(s.dtype());
  DType dt = least_upper_dtype(ds);
  if (contains(dtypes::weaks, dt)) return UOp();
  return commit_srcs_at(u, dt);
}

// a concrete CAST over a weak node states the width the value will live at. that width is a floor, never a narrowing
static UOp cast_weak_srcs(const UOp& c, const UOp& u) {
  if (contains(dtypes::weaks, c.dtype()) || weak_dtype(c.dtype()) != u.dtype()) return UOp();
  return commit_srcs_at(u, least_upper_dtype({c.dtype(), default_dtype(u)})).cast(c.dtype());
}

const PatternMatcher& pm_cast_weak() {
  static const PatternMatcher pm(
      "pm_cast_weak", {
                          TG_RULE(UPat(Ops::CAST).named("c").src(UPat(GroupOp::ALU).dtype(dtypes::weaks).named("u")),
                                  [](U c, U u) { return cast_weak_srcs(c, u); }),
                          TG_RULE(UPat(Ops::CAST).named("c").src(UPat(Ops::CONST).dtype(dtypes::weaks).named("u")),
                                  [](U c, U u) { return commit_weak(u, c.dtype()); }),
                      });
  return pm;
}

const PatternMatcher& pm_commit_weak() {
  static const PatternMatcher pm(
      "pm_commit_weak",
      {
          TG_RULE(UPat(GroupOp::Broadcastable).named("u"), [](U u) { return commit_weak_srcs(u); }).when(any_weak_src),
          // demand from the destination: a STORE's weak value commits at the destination's dtype
          TG_RULE(UPat(Ops::STORE).src(UPat(), UPat().dtype(dtypes::weaks)).any_len().named("u"),
                  [](U u) {
                    std::vector<UOp> src(u.src().begin(), u.src().end());
                    src[1] = commit_weak(u.src(1), u.src(0).dtype());
                    return u.with_src(src);
                  }),
      });
  return pm;
}

static const OpSet lower_weak_ops =
    GroupOp::Binary | GroupOp::Unary | ops(Ops::WHERE, Ops::RANGE, Ops::STACK, Ops::SPECIAL);

static UOp lower_weak_node(const UOp& u) {
  std::vector<UOp> src;
  src.reserve(u.nsrc());
  bool changed = false;
  for (const UOp& s : u.src()) {
    src.push_back(s.op() == Ops::CAST && contains(dtypes::weaks, s.dtype()) ? s.src(0) : s);
    changed |= !(src.back() == s);
  }
  size_t start = u.op() == Ops::WHERE ? 1 : 0;  // WHERE's cond is bool, never part of the width unification
  if (!changed) return UOp();
  for (size_t i = start; i < src.size(); i++)
    if (contains(dtypes::weaks, src[i].dtype())) return UOp();
  DType dt;
  if (GroupOp::Binary.has(u.op())) {
    std::vector<DType> ds{default_dtype(u)};
    for (const UOp& s : src) ds.push_back(s.dtype());
    dt = strong_dtype(least_upper_dtype(ds));
  } else {
    dt = strong_dtype(dtype_from_uop(u.op(), src, u.arg()));
  }
  for (size_t i = start; i < src.size(); i++)
    if (!src[i].base().is_invalid()) src[i] = commit_weak(src[i], dt);
  return u.replace({}, DType(), src).cast(u.dtype());
}

const PatternMatcher& pm_lower_weak() {
  static const PatternMatcher pm(
      "pm_lower_weak",
      {
          TG_RULE(UPat(Ops::CONST).dtype(dtypes::weaks).named("u"),
                  [](U u) { return UOp::const_(u.val(), default_dtype(u)).cast(u.dtype()); }),
          // two stacked weak casts are two kind conversions: each resolves at its own kind's default
          TG_RULE(UPat(Ops::CAST)
                      .dtype(dtypes::weaks)
                      .src(UPat(Ops::CAST).dtype(dtypes::weaks).src(UPat::var("x")))
                      .named("u"),
                  [](U u, U x) {
                    if (contains(dtypes::weaks, x.dtype())) return UOp();
                    return x.cast(default_dtype(u.src(0))).cast(default_dtype(u)).cast(u.dtype());
                  }),
          TG_RULE(UPat(ops(Ops::PARAM, Ops::BUFFER)).dtype(dtypes::weakint).named("u"),
                  [](U u) {
                    const ParamArg* p = u.param_arg();
                    if (!p || !p->has_addrspace || p->addrspace != AddrSpace::ALU) return UOp();
                    auto* np = new ParamArg(*p);
                    np->dtype = default_dtype(u);
                    return u.replace({}, DType(), {}, Arg(static_cast<const ArgObj*>(np))).cast(dtypes::weakint);
                  }),
          TG_RULE(UPat(lower_weak_ops).named("u"), [](U u) { return lower_weak_node(u); }),
      });
  return pm;
}

static UOp lower_weak_srcs(LowerIndexCtx* ctx, const UOp& u) {
  std::optional<LowerIndexCtx> local;  // made only when the rule runs without a ctx (its tables allocate)
  if (ctx == nullptr) ctx = &local.emplace();
  auto lower = [&](U s) {
    auto it = ctx->lowered.find(s);
    if (it != ctx->lowered.end()) return it->second;
    // the weak srcs share their index arithmetic: pm_lower_weak is a pure function of the node, so when nothing is
    // counted the rewrites share their results (the reference rewrites each src's whole graph)
    UOp r = graph_rewrite(s, pm_lower_weak(), {.memo = TRACK_MATCH_STATS.value() == 0 ? &ctx->memo : nullptr});
    // the consumer absorbs the cast on its own edge
    if (r.op() == Ops::CAST && contains(dtypes::weaks, r.dtype())) r = r.src(0);
    ctx->lowered.emplace(s, r);
    return r;
  };
  UOp ret;
  if (GroupOp::Comparison.has(u.op())) {
    ret = lower(u);
  } else {
    std::vector<UOp> src;
    src.reserve(u.nsrc());
    for (const UOp& s : u.src()) src.push_back(contains(dtypes::weaks, s.dtype()) ? lower(s) : s);
    ret = u.with_src(src);
  }
  return ret == u ? UOp() : ret;
}

const PatternMatcher& pm_lower_index_dtype() {
  static const PatternMatcher pm =
      pm_commit_weak() + pm_cast_weak() +
      PatternMatcher(
          "pm_lower_index_dtype",
          {
              TG_RULE(UPat(GroupOp::all()).named("u"),
                      [](LowerIndexCtx* ctx, U u) {
                        if (contains(dtypes::weaks, u.dtype())) return UOp();
                        bool any = false;
                        for (const UOp& s : u.src()) any |= contains(dtypes::weaks, s.dtype());
                        return any ? lower_weak_srcs(ctx, u) : UOp();
                      })
                  .when([](U u) { return !contains(dtypes::weaks, u.dtype()) && any_weak_src(u); }),
              // a valid index into an n-element buffer lives in [0,n): a gated long index narrows when n-1 fits int32
              TG_RULE(UPat(ops(Ops::INDEX, Ops::SHRINK))
                          .src(UPat::var("buf"), UPat::var("gate").where(UPat::var("idx", dtypes::int64),
                                                                         UPat(Ops::CONST).arg(Arg::invalid())))
                          .any_len()
                          .named("u"),
                      [](U u, U buf, U gate, U idx) {
                        pyint numel = 1;
                        for (const sint& s : buf.shape()) numel = sat_mul(numel, s.max_int());
                        if (numel - 1 > 2147483647) return UOp();
                        std::vector<UOp> src{buf, idx.cast(dtypes::int32).valid(gate)};
                        src.insert(src.end(), u.src().begin() + 2, u.src().end());
                        return u.with_src(src);
                      }),
          });
  return pm;
}

}  // namespace tg
