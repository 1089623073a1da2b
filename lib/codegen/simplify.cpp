#include "lib/codegen/simplify.h"

#include <string>

#include "lib/uop/symbolic.h"

namespace tg {

std::vector<UOp> ended_ranges(const UOp& u) {
  switch (u.op()) {
    case Ops::STAGE:
    case Ops::REDUCE:
    case Ops::END:
    case Ops::CALL:
    case Ops::FUNCTION:
      return srcs_from(u, 1);
    case Ops::WMMA:
      return srcs_from(u, 3);
    case Ops::LINEAR:
      return srcs_from(u, 0);
    case Ops::UNSHARD:
      return srcs_from(u, 1);
    case Ops::AFTER: {
      std::vector<UOp> r;
      for (size_t i = 1; i < u.nsrc(); i++) r = cat(std::move(r), ended_ranges(u.src(i)));
      return r;
    }
    default:
      return {};
  }
}

static size_t range_start(Ops op) { return op == Ops::WMMA ? 3 : op == Ops::LINEAR ? 0 : 1; }

static UOp flatten_range(const UOp& r) {
  size_t off = range_start(r.op());
  std::vector<UOp> rngs = srcs_from(r, off);
  if (rngs.empty()) return UOp();
  // ranges in the cond should not be ended
  std::vector<UOp> backedge, rest;
  for (const UOp& x : rngs) (x.dtype() == dtypes::void_ || x.dtype() == dtypes::bool_ ? backedge : rest).push_back(x);
  std::vector<UOp> src(r.src().begin(), r.src().begin() + off);
  src = cat(std::move(src), UOp::sink(rest).ranges());
  src = cat(std::move(src), backedge);
  return r.with_src(src);
}

const PatternMatcher& pm_flatten_range() {
  static const PatternMatcher pm("pm_flatten_range", {
                                                         // real ranges only
                                                         TG_RULE(UPat(ops(Ops::REDUCE, Ops::END)).named("r"),
                                                                 [](U r) { return flatten_range(r); }),
                                                     });
  return pm;
}

// index/range arithmetic uses FLOORDIV/FLOORMOD prior to late rewrite
static size_t count_divmod(const UOp& x) {
  size_t n = 0;
  for (const UOp& u : x.backward_slice()) n += u.op() == Ops::FLOORDIV || u.op() == Ops::FLOORMOD;
  return n;
}

static UOp simplify_merge_adjacent(UOp u) {
  std::vector<UOp> er = ended_ranges(u);
  for (const UOp& r : er)
    if (r.op() != Ops::RANGE) return UOp();
  std::vector<std::vector<UOp>> reduce_ranges;
  if (u.op() == Ops::REDUCE) reduce_ranges.push_back(u.ranges());
  for (const UOp& x : u.backward_slice())
    if (x.op() == Ops::REDUCE) reduce_ranges.push_back(x.ranges());
  // on END we only want to merge adjacent ranges, on REDUCE we want to try all combinations
  std::vector<std::pair<UOp, UOp>> pairs;
  if (u.op() == Ops::END) {
    for (size_t i = 0; i + 1 < er.size(); i++) pairs.emplace_back(er[i], er[i + 1]);
  } else {
    for (size_t i = 0; i < er.size(); i++)
      for (size_t j = 0; j < er.size(); j++)
        if (i != j) pairs.emplace_back(er[i], er[j]);
  }
  static const PatternMatcher pm = pm_substitute() + symbolic() + pm_flatten_range();
  for (const auto& [r0, r1] : pairs) {
    // check same type
    if (!r0.arg().items().back().py_eq(r1.arg().items().back())) continue;
    // check if the ranges to merge are in the same reduces
    bool same = true;
    for (const auto& rngs : reduce_ranges)
      if (contains(rngs, r0) != contains(rngs, r1)) same = false;
    if (!same) continue;
    UOp s0 = r0.src(0), s1 = r1.src(0);
    // do the merge
    UOp new_range = r0.with_src({s0 * s1});
    UOpMap<UOp> ctx{{r0, new_range.floordiv(s1)}, {r1, new_range.mod(s1)}};
    std::string name = "check_merge_" + r0.arg()[0].str() + "_" + r1.arg()[0].str();
    UOp nidx = graph_rewrite(u, pm, {.ctx = &ctx, .name = name.c_str()});
    // check if it simplifies
    if (count_divmod(nidx) <= count_divmod(u)) u = nidx;
  }
  return u;
}

static void mark_gated(UOpDict<UOp>& ctx, const UOp& idx) {
  UOp x;
  UOpDict<UOp> guards;
  if (idx.nsrc() > 1 && idx.src(1).op() == Ops::WHERE) {
    x = idx.src(1).get_idx();
    UOp cond = idx.src(1).get_valid();
    // get all ranges r with guards "r < c" for some const c
    for (const UOp& v : cond.split_uop(Ops::AND))
      if (v.op() == Ops::CMPLT && v.src(0).op() == Ops::RANGE && v.src(1).op() == Ops::CONST)
        guards.set(v.src(0), v.src(1));
  } else {
    x = idx;
  }
  // ensure that we choose max(c_i) for all i where r < c_i
  for (const auto& [r, c] : guards.items()) {
    const UOp* have = ctx.find(r);
    if (!have || py_lt(have->val(), c.val())) ctx.set(r, c);
  }
  // but if a range is ever ungated, we cannot shrink it
  for (const UOp& r : x.ranges())
    if (!guards.contains(r)) ctx.set(r, r.src(0));
}

template <typename F>
static UOp do_substitute(UOpDict<UOp>& ctx, const UOp& x, F sub_fxn) {
  std::vector<std::pair<UOp, UOp>> d;
  for (const auto& [k, v] : ctx.items())
    if (v) d.emplace_back(k, sub_fxn(k, v));
  UOp ret = x.substitute(d);
  ctx.clear();
  return ret == x ? UOp() : ret.simplify();
}

const PatternMatcher& pm_simplify_ranges() {
  static const PatternMatcher pm(
      "pm_simplify_ranges",
      {
          TG_RULE(UPat(ops(Ops::END, Ops::REDUCE)).named("u"), [](U u) { return simplify_merge_adjacent(u); }),
          TG_RULE(UPat(Ops::INDEX).named("idx"),
                  [](UOpDict<UOp>& ctx, U idx) {
                    mark_gated(ctx, idx);
                    return UOp();
                  }),
          // reduce ranges can't be shrunk
          TG_RULE(UPat(Ops::REDUCE).named("red"),
                  [](UOpDict<UOp>& ctx, U red) {
                    for (size_t i = 1; i < red.nsrc(); i++) ctx.set(red.src(i), red.src(i).src(0));
                    return UOp();
                  }),
          TG_RULE(
              UPat(Ops::SINK).named("x"),
              [](UOpDict<UOp>& ctx, U x) { return do_substitute(ctx, x, [](U r, U c) { return r.with_src({c}); }); }),
      });
  return pm;
}

static Arg arg_with_sub(const UOp& k, int64_t sub) {
  std::vector<Arg> a(k.arg().items().begin(), k.arg().items().end() - 1);
  a.push_back(Arg((long long)sub));
  a.push_back(k.arg().items().back());
  return Arg::tuple(a);
}

const PatternMatcher& pm_split_ranges() {
  static const PatternMatcher pm(
      "pm_split_ranges",
      {
          TG_RULE(UPat(Ops::RANGE).named("r") % UPat::cvar("c"),
                  [](UOpDict<UOp>& ctx, U r, U c) {
                    // ranges that aren't looped over can't be split
                    AxisType at = r.arg().items().back().as_axis();
                    if (!ctx.contains(r) && at != AxisType::WARP && at != AxisType::DEVICE &&
                        r.src(0).op() == Ops::CONST && c.val().is_int() && r.src(0).divides(c.val().as_int()))
                      ctx.set(r, c);
                    return UOp();
                  }),
          TG_RULE(UPat(Ops::SINK).named("x"),
                  [](UOpDict<UOp>& ctx, U x) {
                    return do_substitute(ctx, x, [](U k, U v) {
                      return k.replace({}, {}, std::vector<UOp>{k.src(0).floordiv(v)}, arg_with_sub(k, 0)) * v +
                             k.replace({}, {}, std::vector<UOp>{v}, arg_with_sub(k, 1));
                    });
                  }),
      });
  return pm;
}

// **** reduce simplification ****

bool no_range(const UOp& u) { return !u.op_in_backward_slice_with_self(OpSet{Ops::RANGE}); }
bool no_load(const UOp& u) { return !u.op_in_backward_slice_with_self(OpSet{Ops::INDEX}); }

static UOp reduce_unparented(const UOp& red) {
  Ops rop = red.arg()[0].as_op();
  if (rop != Ops::ADD && rop != Ops::MAX && rop != Ops::MUL) return UOp();
  for (size_t i = 1; i < red.nsrc(); i++)
    if (red.src(i).op() != Ops::RANGE) throw Error("some reduce srcs aren't ranges");
  std::vector<UOp> parented, unparented, src_ranges = red.src(0).ranges();
  for (size_t i = 1; i < red.nsrc(); i++)
    (contains(src_ranges, red.src(i)) ? parented : unparented).push_back(red.src(i));
  if (unparented.empty()) return UOp();
  UOp ret =
      !parented.empty() || red.dtype() != red.src(0).dtype() ? red.with_src(cat({red.src(0)}, parented)) : red.src(0);
  if (rop == Ops::ADD)
    for (const UOp& r : unparented) ret = ret * r.src(0);
  if (rop == Ops::MUL)
    for (const UOp& r : unparented) ret = ret.pow(r.src(0));
  return ret;
}

const PatternMatcher& pm_reduce_unparented() {
  static const PatternMatcher pm(
      "pm_reduce_unparented", {
                                  // remove any ranges from a REDUCE that aren't referenced in the reduce source
                                  TG_RULE(UPat(Ops::REDUCE).named("red"), [](U red) { return reduce_unparented(red); }),
                              });
  return pm;
}

static UPat reduce_of(const UPat& p, const std::vector<UPat>& more = {}) {
  std::vector<UPat> src{p};
  src.insert(src.end(), more.begin(), more.end());
  return UPat(Ops::REDUCE).src_tuple(src).arg(Arg::tup(Ops::ADD, 0));
}

static UOp reduce_add(const UOp& x, const UOp& r) {
  return x.reduce(std::span<const UOp>(r.src().begin() + 1, r.src().end()), Ops::ADD);
}

const PatternMatcher& pm_reduce_collapse() {
  static const PatternMatcher pm =
      pm_reduce_unparented() +
      PatternMatcher(
          "pm_reduce_collapse",
          {
              // lift x+y out of reduce on lt
              TG_RULE((UPat::var("x") + UPat::var("y")).or_casted() < UPat::var("c"),
                      [](U x, U y, U c) { return no_range(y) && no_range(c) ? x.lt(c - y) : UOp(); }),
              // lift x*y out of reduce
              TG_RULE((UPat::var("x") * UPat::var("y")) < UPat::var("c"),
                      [](U x, U y, U c) {
                        return no_range(y) && no_range(c) && dtypes::is_int(y.dtype()) && py_lt(PyConst(0), y.vmin())
                                   ? x.lt((c + y).sub(PyConst(1)).floordiv(y))
                                   : UOp();
                      }),
              // sum over r in [0,N) of [lower<=r<upper]*val -> clamp(min(upper,N) - max(lower,0), 0, N) * val
              TG_RULE(UPat(Ops::REDUCE)
                          .src(UPat::any((UPat(Ops::RANGE).named("r") < UPat::var("upper")).where(UPat::var("val"), 0),
                                         (UPat(Ops::RANGE).named("r") < UPat::var("lower")).where(0, UPat::var("val")),
                                         ((UPat::var("r") < UPat::var("lower")).logical_not() &
                                          (UPat(Ops::RANGE).named("r") < UPat::var("upper")))
                                             .where(UPat::var("val"), 0)),
                               UPat::var("r"))
                          .arg(Arg::tup(Ops::ADD, 0)),
                      [](U r, U val, U lower, U upper) {
                        if (!no_range(val)) return UOp();
                        UOp hi = upper ? upper.minimum(r.src(0)) : r.src(0);
                        UOp lo = lower ? lower.maximum(PyConst(0)) : r.const_like(0);
                        return (hi - lo).maximum(PyConst(0)).minimum(r.src(0)) * val;
                      }),
              TG_RULE(invalid_gate().reduce(Ops::ADD).any_len().named("r"),
                      [](U cond, U x, U i, U r) { return no_range(cond) ? cond.where(reduce_add(x, r), i) : UOp(); }),
              TG_RULE((UPat::var("x") + UPat::var("y")).reduce(Ops::ADD).any_len().named("r"),
                      [](U x, U y, U r) { return reduce_add(x, r) + reduce_add(y, r); }),
              // AND on WHERE
              TG_RULE((UPat(Ops::PARAM).named("x") & UPat::var("y"))
                          .where(UPat::var("c"), 0)
                          .reduce(Ops::ADD)
                          .any_len()
                          .named("r"),
                      [](U x, U y, U c, U r) { return reduce_add(y.where(c, PyConst(0)), r) * x; }),
              // MUL casted bool
              TG_RULE(UPat::var("x") * UPat::var("gate", dtypes::bool_).cast(),
                      [](U x, U gate) { return gate.where(x, PyConst(0)); }),
          }) +
      symbolic();
  return pm;
}

const PatternMatcher& pm_reduce_load_collapse() {
  static const PatternMatcher pm =
      pm_reduce_collapse() +
      PatternMatcher(
          "pm_reduce_load_collapse",
          {
              // lift x+y out of reduce on ne
              TG_RULE((UPat::var("x") + UPat::var("y")).or_casted().ne(UPat::var("c")),
                      [](U x, U y, U c) { return no_range(y) && no_range(c) ? x.ne(c.cast(y.dtype()) - y) : UOp(); }),
              // reduce on gated load becomes can substitute the range and remove the reduce
              TG_RULE(
                  reduce_of(UPat::var("idx").ne(UPat(Ops::RANGE).named("r").or_casted()).where(0, UPat::var("expr")),
                            {UPat::var("r")}),
                  [](U r, U idx, U expr) {
                    UOp ic = idx.cast(r.dtype());
                    UOp v = ic.ge(PyConst(0)).bitwise_and(ic.lt(r.src(0)));
                    return v.where(expr.substitute({{r, ic.valid(v)}}), PyConst(0));
                  }),
          });
  return pm;
}

static UOp reduce_collapse(const UOp& red, UOp u, const PatternMatcher& pm) {
  for (size_t ri = 1; ri < red.nsrc(); ri++) {
    const UOp& r = red.src(ri);
    std::vector<UOp> included = u.toposort([&](U x) { return contains(x.ranges(), r); });
    UOpSet inc(included.begin(), included.end());
    for (const UOp& x : included)
      if (x.op() == Ops::STORE || x.op() == Ops::REDUCE) return UOp();
    UOpDict<UOp> replaces;
    for (const UOp& x : included)
      for (const UOp& s : x.src()) {
        if (inc.count(s) || replaces.contains(s) || s.op() == Ops::CONST || s.op() == Ops::PARAM ||
            s.op() == Ops::BUFFER)
          continue;
        replaces.set(s, UOp::variable("in" + std::to_string(replaces.size()), s.vmin(), s.vmax(), s.dtype(), 1, true));
      }
    // python's loop variable leaks: u is now the last node of `included`
    if (!included.empty()) u = included.back();
    std::vector<std::pair<UOp, UOp>> fwd, back;
    for (const auto& [k, v] : replaces.items()) fwd.emplace_back(k, v), back.emplace_back(v, k);
    UOp collapse_fxn = u.substitute(fwd).reduce(std::span<const UOp>(&r, 1), Ops::ADD);
    UOp sink = graph_rewrite(collapse_fxn, pm, {.name = "reduce_collapse"});
    if (!no_range(sink)) return UOp();
    u = sink.substitute(back);
  }
  return u;
}

const PatternMatcher& pm_reduce_simplify() {
  static const PatternMatcher pm =
      pm_reduce_unparented() +
      PatternMatcher(
          "pm_reduce_simplify",
          {
              TG_RULE(UPat(Ops::REDUCE).src(UPat::var("u")).any_len().arg(Arg::tup(Ops::ADD, 0)).named("red"),
                      [](U red, U u) { return reduce_collapse(red, u, pm_reduce_collapse()); }),
          });
  return pm;
}

const PatternMatcher& pm_load_collapse() {
  static const PatternMatcher pm(
      "pm_load_collapse",
      {
          TG_RULE(UPat(Ops::REDUCE).arg(Arg::tup(Ops::ADD, 0)).src(UPat::var("u"), UPat()).named("red"),
                  [](U red, U u) { return reduce_collapse(red, u, pm_reduce_load_collapse()); }),
          // we want to make sure we dont do math on a loaded index since that can cause overflow, this undoes the rule
          // in pm_reduce_load_collapse
          TG_RULE((UPat::var("x", dtypes::weakint) + UPat::var("y")) < UPat::var("c"),
                  [](U x, U y, U c) { return no_load(y) && no_load(c) && !no_load(x) ? x.lt(c - y) : UOp(); }),
      });
  return pm;
}

}  // namespace tg
