#include "lib/uop/symbolic.h"

#include <cmath>
#include <limits>

#include "lib/codegen/decomp/transcendental.h"
#include "lib/uop/divandmod.h"
#include "lib/uop/movement.h"
#include "lib/uop/pyutil.h"
#include "lib/uop/track.h"
#include "lib/uop/weak.h"

namespace tg {

static UOp ic(pyint v) { return UOp::const_(PyConst(v)); }
static UOp pc(PyConst v) { return UOp::const_(v); }
static bool is_nan_or_inf(const PyConst& c) { return c.is_float() && (std::isnan(c.f) || std::isinf(c.f)); }

UOp py_prod(const std::vector<UOp>& xs) {
  UOp acc = xs[0].mul(ic(1), true);
  for (size_t i = 1; i < xs.size(); i++) acc = acc * xs[i];
  return acc;
}

// ******** phase 1: the most generic folding rules ********

static UOp simplify_pow(const UOp& x, const UOp& c) {
  PyConst v = c.val();
  if (py_lt(v, PyConst(0))) return x.reciprocal().pow(pc(py_neg(v)));
  if (v == PyConst(0)) return x.const_like(1);
  double fv = v.as_float();
  if ((double)(pyint)(fv - 0.5) + 0.5 == fv) return x.pow(pc(py_sub(v, PyConst(0.5)))) * x.sqrt();
  if ((double)(pyint)fv == fv) {
    PyConst half = v.is_float() ? PyConst(std::floor(fv / 2)) : PyConst(floordiv(v.as_int(), 2));
    bool odd = v.is_float() ? std::fmod(fv, 2.0) == 1.0 : floormod(v.as_int(), 2) == 1;
    UOp y = x.pow(pc(half));
    return (y * y) * (odd ? x : ic(1));
  }
  return UOp();
}

static UOp fold_bitcast(const UOp& root, const UOp& c) {
  if (!c.dtype().fmt() || !root.dtype().fmt() || c.dtype().itemsize() != root.dtype().itemsize()) return UOp();
  return root.const_like(bitcast(truncate(c.dtype(), c.val()), c.dtype(), root.dtype()));
}

// const folding works for CONST and STACK (of CONSTs); a CAST of a CONST folds at the cast's width
static bool const_arg(const UOp& u, std::vector<PyConst>& out, bool& is_vec) {
  if (u.op() == Ops::CONST) {
    out = {u.val()};
    is_vec = false;
    return true;
  }
  if (u.op() == Ops::CAST && u.src(0).op() == Ops::CONST) {
    out = {u.dtype().const_(u.src(0).val())};
    is_vec = false;
    return true;
  }
  if (u.op() == Ops::STACK) {
    out.clear();
    for (const UOp& s : u.src()) {
      if (s.op() != Ops::CONST) return false;
      out.push_back(s.val());
    }
    is_vec = true;
    return true;
  }
  return false;
}

UOp fold_const_alu(const UOp& a) {
  std::vector<std::vector<PyConst>> vals(a.nsrc());
  size_t width = 0;
  bool any_vec = false;
  for (size_t i = 0; i < a.nsrc(); i++) {
    bool v;
    if (!const_arg(a.src(i), vals[i], v)) return UOp();
    if (v) any_vec = true, width = std::max(width, vals[i].size());
  }
  auto lane = [&](size_t l) {
    std::vector<PyConst> ops;
    for (auto& v : vals) ops.push_back(v.size() == 1 && !any_vec ? v[0] : v[v.size() == 1 ? 0 : l]);
    return exec_alu(a.op(), a.dtype(), ops, false);
  };
  if (!any_vec) return a.const_like(lane(0));
  std::vector<UOp> lanes;
  for (size_t l = 0; l < width; l++) lanes.push_back(UOp::const_(lane(l), a.dtype()));
  UOp ret = UOp::stack(lanes);
  const auto& s = a.shape_opt();
  return (s && !s->empty() && ret.shape().size() != s->size()) ? ret.mop(Ops::EXPAND, *s) : ret;
}

// the B with q == B//div and B%div == base%div, or None
static UOp quotient_base(const UOp& q0, const UOp& base0, pyint div) {
  auto [q, s_] = q0.pop_const();
  auto [num, a_] = base0.pop_const();
  pyint s = s_.as_int(), a = a_.as_int();
  if (q.op() != Ops::FLOORDIV || q.src(1).op() != Ops::CONST) return UOp();
  pyint D;
  UOp numv = num;
  if (div > 0 && num.op() == Ops::FLOORDIV && num.src(1).op() == Ops::CONST &&
      q.src(1).val().as_int() == num.src(1).val().as_int() * div) {
    pyint c = num.src(1).val().as_int();
    numv = num.src(0), a = a * c, D = c * div;
  } else if (q.src(1).val().as_int() == div) {
    D = div;
  } else {
    return UOp();
  }
  auto [xx, xa] = numv.pop_const();
  auto [p, pa] = q.src(0).pop_const();
  pyint t = xa.as_int() + a - pa.as_int();
  if (!(p == xx) || py::fmod(t, D)) return UOp();
  pyint k = py::fdiv(t, D) - s;
  return k ? base0 - (PyConst(k) * pc(PyConst(div))) : base0;
}

// does the ADD chain have a term (x%c) or (x%c)*k? (no allocation: most ADDs have none)
static bool has_const_mod_term(const UOp& x) {
  detail::UOpNode* st[64];
  int n = 0;
  st[n++] = x.node();
  while (n) {
    detail::UOpNode* u = st[--n];
    if (u->op == Ops::ADD) {
      if (n + 2 > 64) return true;  // very long chains: take the general path
      st[n++] = u->srcs[1], st[n++] = u->srcs[0];
      continue;
    }
    if (u->op == Ops::MUL && u->srcs[1]->op == Ops::CONST) u = u->srcs[0];
    if (u->op == Ops::FLOORMOD && u->srcs[1]->op == Ops::CONST) return true;
  }
  return false;
}

// (x + c1) + y moves c1 out only when y is not a CONST: some ordering of u's srcs is (an ADD with a CONST src, a
// non-CONST)
static bool const_sum_and_non_const(const UOp& u) {
  auto sum_with_const = [](U a) {
    return a.op() == Ops::ADD && (a.src(0).op() == Ops::CONST || a.src(1).op() == Ops::CONST);
  };
  return (sum_with_const(u.src(0)) && u.src(1).op() != Ops::CONST) ||
         (sum_with_const(u.src(1)) && u.src(0).op() != Ops::CONST);
}

static UOp fold_add_divmod_recombine(const UOp& x) {
  if (!has_const_mod_term(x)) return UOp();
  std::vector<UOp> terms = x.split_uop(Ops::ADD);
  for (size_t i = 0; i < terms.size(); i++) {
    auto [mod, mul_] = terms[i].pop_const(Ops::MUL);
    if (mod.op() != Ops::FLOORMOD || mod.src(1).op() != Ops::CONST) continue;
    pyint mul = mul_.as_int();
    UOp base = mod.src(0);
    pyint div = mod.src(1).val().as_int();
    for (size_t j = 0; j < terms.size(); j++) {
      auto [q, scale] = terms[j].pop_const(Ops::MUL);
      if (i == j || scale != PyConst(div * mul)) continue;
      std::vector<UOp> rest;
      for (size_t k = 0; k < terms.size(); k++)
        if (k != i && k != j) rest.push_back(terms[k]);
      if (UOp b = quotient_base(q, base, div)) return (b * PyConst(mul)).usum(rest);
      if (q.op() == Ops::FLOORMOD && q.src(1).op() == Ops::CONST && q.src(1).val().as_int() > 0) {
        pyint d = q.src(1).val().as_int();
        if (UOp b = quotient_base(q.src(0), base, div)) return ((b % PyConst(div * d)) * PyConst(mul)).usum(rest);
      }
    }
  }
  return UOp();
}

UPat invalid_pat() { return UPat(Ops::CONST).arg(Arg::invalid()).named("i"); }
UPat invalid_gate() { return UPat::var("cond").where(UPat::var("x"), invalid_pat()); }

// Invalid poisons the value: ops move inside the gate so the Invalid reaches the LOAD/STORE and folds there
const PatternMatcher& pm_data_invalid() {
  static const PatternMatcher pm = [] {
    UPat invalid_pat = ::tg::invalid_pat(), invalid_gate = ::tg::invalid_gate();
    return PatternMatcher(
        "pm_data_invalid",
        {
            TG_RULE(invalid_pat.broadcast(), [](U i) { return i; }),
            TG_RULE(UPat(GroupOp::Unary | ops(Ops::CAST, Ops::BITCAST)).src(invalid_pat), [](U i) { return i; }),
            TG_RULE(UPat(GroupOp::Unary | ops(Ops::CAST, Ops::BITCAST)).src(invalid_gate).named("op"),
                    [](U cond, U x, U op, U i) { return cond.where(op.with_src({x}), i); }),
            // binary ops move inside the gate, with Invalid in the false branch
            TG_RULE(UPat(GroupOp::Binary).src(invalid_gate, UPat::var("y")).named("alu"),
                    [](U cond, U x, U y, U alu, U i) { return cond.where(x.alu(alu.op(), y), i); }),
            TG_RULE(UPat(GroupOp::Binary).src(UPat::var("y"), invalid_gate).named("alu"),
                    [](U cond, U x, U y, U alu, U i) { return cond.where(y.alu(alu.op(), x), i); }),
            TG_RULE(UPat(GroupOp::Binary - GroupOp::Comparison).perm(invalid_pat, UPat()), [](U i) { return i; }),
            // an Invalid condition poisons the whole where; a gated Invalid condition lifts the gate out
            TG_RULE(invalid_pat.where(UPat(), UPat()), [](U i) { return i; }),
            TG_RULE(invalid_gate.where(UPat::var("a"), UPat::var("b")),
                    [](U cond, U x, U i, U a, U b) { return cond.where(x.where(a, b), i); }),
            // normalize where(cond, Invalid, val) -> where(~cond, val, Invalid)
            TG_RULE(UPat::var("cond").where(invalid_pat, UPat::var("val")),
                    [](U cond, U i, U val) { return !val.is_invalid() ? cond.logical_not().where(val, i) : i; }),
            // lift Invalid out: a.where(cond.where(x, Invalid), c) -> (~a|cond).where(a.where(x, c), Invalid)
            TG_RULE(UPat::var("a").where(invalid_gate, UPat::var("c")),
                    [](U cond, U i, U x, U a, U c) {
                      return !c.is_invalid() ? (a.logical_not() | cond).where(a.where(x, c), i) : UOp();
                    }),
            TG_RULE(UPat::var("a").where(UPat::var("b"), invalid_gate),
                    [](U cond, U i, U x, U a, U b) {
                      return !b.is_invalid() ? (a | cond).where(a.where(b, x), i) : UOp();
                    }),
            // fold gated LOAD/STORE
            TG_RULE(UPat(Ops::STORE).src(UPat(Ops::INDEX).src(UPat(), invalid_pat).any_len().or_casted(), UPat()),
                    [](U i) { return UOp(Ops::NOOP); }),
            TG_RULE(UPat(Ops::LOAD)
                        .src(UPat(Ops::INDEX).src(UPat(), invalid_pat).any_len().or_casted())
                        .any_len()
                        .named("x"),
                    [](U x, U i) { return x.nsrc() > 1 ? x.src(1) : x.const_like(0); }),
        });
  }();
  return pm;
}

const PatternMatcher& pm_remove_invalid() {
  static const PatternMatcher pm("pm_remove_invalid",
                                 {
                                     TG_RULE(invalid_gate().named("w"),
                                             [](U cond, U x, U i, U w) {
                                               return w.with_src({cond, x, w.const_like(0)});
                                             }),
                                     TG_RULE(UPat(Ops::STACK).named("s"),
                                             [](U s) {
                                               bool any = false;
                                               std::vector<UOp> src;
                                               for (const UOp& x : s.src()) {
                                                 any |= x.is_invalid();
                                                 src.push_back(x.is_invalid() ? UOp::const_(PyConst(0), s.dtype()) : x);
                                               }
                                               return any ? s.with_src(src) : UOp();
                                             }),
                                 });
  return pm;
}

static UOp fold_const_where(const UOp& gate, const UOp& c0, const UOp& c1, const UOp& w) {
  // folding a strong dtype WHERE to a weak const branch keeps the strong dtype
  UOp ret = gate.val().truthy() ? c0 : c1;
  if (ret.op() == Ops::CONST && contains(dtypes::weaks, ret.dtype()) && !contains(dtypes::weaks, w.dtype()))
    return commit_weak(ret, w.dtype());
  return ret;
}

const PatternMatcher& symbolic_simple() {
  static const PatternMatcher pm = [] {
    UPat const_folding_pat = UPat(ops(Ops::CONST, Ops::STACK));
    DTypes int_like = dtypes::ints + DTypes{dtypes::bool_, dtypes::weakint};
    return pm_data_invalid() +
           PatternMatcher(
               "symbolic_simple",
               {
                   // ** self folding **
                   // x+0 / x^0 / x|0 -> x
                   TG_RULE(UPat(ops(Ops::ADD, Ops::XOR, Ops::OR)).perm(UPat::var("x"), UPat::const_(PyConst(0))),
                           [](U x) { return x; }),
                   // x<<0 / x>>0 -> x
                   TG_RULE(UPat(ops(Ops::SHL, Ops::SHR)).src(UPat::var("x"), UPat::const_(PyConst(0))),
                           [](U x) { return x; }),
                   TG_RULE(UPat::var("x") * 1, [](U x) { return x; }),  // x*1 -> x
                   TG_RULE(UPat::var("x").floordiv(UPat::var("x")),     // x//x -> 1
                           [](U x) { return x.const_like(1); }),
                   TG_RULE(UPat::var("x").floordiv(1), [](U x) { return x; }),    // x//1 -> x
                   TG_RULE(UPat::var("x").floordiv(-1), [](U x) { return -x; }),  // x//-1 -> -x
                   TG_RULE((UPat::var("x") ^ UPat::var("y")) ^ UPat::var("y"),    // (x^y)^y -> x
                           [](U x, U y) { return x; }),
                   // (x%y)%y -> x%y (rewritten with base for speed)
                   TG_RULE((UPat::var() % UPat::var("y")).named("base") % UPat::var("y"),
                           [](U base, U y) { return base; }),
                   // variations of (x%c)+(x//c)*c = x
                   TG_RULE(UPat(Ops::ADD).dtype(dtypes::weakint).named("x"),
                           [](U x) { return fold_add_divmod_recombine(x); })
                       .when([](U x) { return x.slice_ops().has(Ops::FLOORMOD) && has_const_mod_term(x); }),
                   TG_RULE(UPat::var("x", dtypes::bool_) & UPat::cvar("c"),
                           [](U x, U c) { return c.val().truthy() ? x : c; }),
                   TG_RULE(UPat::var("x", dtypes::bool_) | UPat::cvar("c"),
                           [](U x, U c) { return c.val().truthy() ? c : x; }),
                   // x != False -> x
                   TG_RULE(UPat::var("x", dtypes::bool_).ne(UPat::const_(PyConst(false), dtypes::bool_)),
                           [](U x) { return x; }),
                   TG_RULE(UPat(GroupOp::Idempotent).src(UPat::var("x"), UPat::var("x")), [](U x) { return x; }),
                   TG_RULE(UPat::var("x", dtypes::bool_).logical_not().logical_not(), [](U x) { return x; }),
                   TG_RULE(UPat::var("x", dtypes::bool_)
                               .where(UPat::const_(PyConst(true), dtypes::bool_),
                                      UPat::const_(PyConst(false), dtypes::bool_)),
                           [](U x) { return x; }),
                   TG_RULE(UPat::var("x", dtypes::bool_)
                               .where(UPat::const_(PyConst(false), dtypes::bool_),
                                      UPat::const_(PyConst(true), dtypes::bool_)),
                           [](U x) { return x.logical_not(); }),
                   // CAST(bool -> int) != const: CAST(True)=1, CAST(False)=0, so fold based on const value
                   TG_RULE(
                       UPat::var("x", dtypes::bool_).cast(dtypes::ints + DTypes{dtypes::weakint}).ne(UPat::cvar("c")),
                       [](U x, U c) {
                         PyConst v = c.val();
                         return v == PyConst(0) ? x : v == PyConst(1) ? x.logical_not() : x.const_like(PyConst(true));
                       }),
                   TG_RULE(UPat::var("x", int_like).trunc(), [](U x) { return x; }),
                   // ** zero folding **
                   TG_RULE(UPat::var("x") < UPat::var("x"),  // x < x -> False
                           [](U x) { return x.const_like(PyConst(false), dtypes::bool_); }),
                   // x%x -> 0, x^x -> 0, x&0 -> 0
                   TG_RULE(UPat::var("x") % UPat::var("x"), [](U x) { return x.const_like(0); }),
                   TG_RULE(UPat::var("x") ^ UPat::var("x"), [](U x) { return x.const_like(0); }),
                   TG_RULE(UPat::var("x") & 0, [](U x) { return x.const_like(0); }),
                   // (x&mask)>>k -> x>>k when mask only clears bits below k
                   TG_RULE((UPat::var("x") & UPat::cvar("mask")) >> UPat::cvar("k"),
                           [](U x, U mask, U k) {
                             pyint kv = k.val().as_int();
                             if (kv < 0 || kv >= 127) return UOp();
                             return (mask.val().as_int() | (((pyint)1 << kv) - 1)) == -1 ? x >> PyConst(kv) : UOp();
                           }),
                   // (x&mask)//c -> x//c when c is a power of two and mask only clears bits below it
                   TG_RULE((UPat::var("x") & UPat::cvar("mask")).floordiv(UPat::cvar("c")),
                           [](U x, U mask, U c) {
                             pyint cv = c.val().as_int();
                             return cv > 0 && (cv & (cv - 1)) == 0 && (mask.val().as_int() | (cv - 1)) == -1
                                        ? x.floordiv(ic(cv))
                                        : UOp();
                           }),
                   // x != x -> False (only ints)
                   TG_RULE(UPat::var("x", int_like).ne(UPat::var("x")),
                           [](U x) { return x.const_like(PyConst(false), dtypes::bool_); }),
                   // ** constant folding **
                   // a CAST to a concrete dtype over a CONST is a value conversion: evaluate it once, at the width the
                   // CAST states. TODO (reference): delete this once CONST has no dtype
                   TG_RULE(UPat(Ops::CAST).dtype(dtypes::all).named("root").src(UPat::cvar("c")),
                           [](U root, U c) { return root.const_like(c.val()); }),
                   TG_RULE(UPat(GroupOp::Unary).src(const_folding_pat).named("a"),
                           [](U a) { return fold_const_alu(a); }),
                   // NOTE: THREEFRY(const,const) folds via its decomposition
                   TG_RULE(UPat(GroupOp::Binary - OpSet(Ops::THREEFRY))
                               .src(const_folding_pat, const_folding_pat)
                               .named("a"),
                           [](U a) { return fold_const_alu(a); }),
                   TG_RULE(
                       UPat(GroupOp::Ternary).src(const_folding_pat, const_folding_pat, const_folding_pat).named("a"),
                       [](U a) { return fold_const_alu(a); }),
                   // bool MUL is AND, ADD/MAX is OR. prevents other rules to rewrite bool ADD/MUL incorrectly
                   TG_RULE(UPat::var("x", dtypes::bool_) * UPat::var("y", dtypes::bool_),
                           [](U x, U y) { return x & y; }),
                   TG_RULE(UPat::var("x", dtypes::bool_) + UPat::var("y", dtypes::bool_),
                           [](U x, U y) { return x | y; }),
                   TG_RULE(UPat::var("x", dtypes::bool_).maximum(UPat::var("y", dtypes::bool_)),
                           [](U x, U y) { return x | y; }),
                   // *** div rules ***
                   // 0/0 -> nan, (x*0)/0 -> nan
                   TG_RULE(UPat::cvar("x", DTypes{}, Arg(0)) / 0,
                           [](U x) { return x.const_like(PyConst(std::numeric_limits<double>::quiet_NaN())); }),
                   TG_RULE((UPat::var("x") * 0) / 0,
                           [](U x) { return x.const_like(PyConst(std::numeric_limits<double>::quiet_NaN())); }),
                   // can be wrong if x or x2 is 0: x/x -> 1, (x*x2)/x2 -> x
                   TG_RULE(UPat::var("x") / UPat::var("x"), [](U x) { return x.const_like(1); }),
                   TG_RULE((UPat::var("x") * UPat::var("x2")) / UPat::var("x2"), [](U x, U x2) { return x; }),
                   // x*0 -> 0 or 0*x -> 0. if x is nan or inf it should render the nan value.
                   // NOTE: this can be wrong for loaded NaN
                   TG_RULE(UPat::var("x") * 0,
                           [](U x) {
                             bool naninf = x.op() == Ops::CONST && is_nan_or_inf(x.val());
                             return x.const_like(naninf ? PyConst(std::numeric_limits<double>::quiet_NaN())
                                                        : PyConst(0));
                           }),
                   // *** cast/bitcast ***
                   TG_RULE(UPat(ops(Ops::CAST, Ops::BITCAST)).named("root"),
                           [](U root) { return root.dtype() == root.src(0).dtype() ? root.src(0) : UOp(); }),
                   TG_RULE(UPat(Ops::BITCAST).named("root").src(UPat::cvar("c")),
                           [](U root, U c) { return fold_bitcast(root, c); }),
                   // b.cast(a).cast(b) -> b if a preserves all values in b
                   TG_RULE(UPat::var("x").cast().named("a").cast().named("b"),
                           [](U x, U a, U b) {
                             return x.dtype() == b.dtype() && can_lossless_cast(b.dtype(), a.dtype()) ? x : UOp();
                           }),
                   // bitcast twice
                   TG_RULE(UPat(Ops::BITCAST).named("b").src(UPat::var("x").bitcast()),
                           [](U x, U b) { return x.bitcast(b.dtype()); }),
                   TG_RULE(UPat::var("x").cast(dtypes::bool_), [](U x) { return x.ne(ic(0)); }),
                   // ** pow **
                   TG_RULE(UPat::var("x").alu(Ops::POW, UPat::cvar("c")), [](U x, U c) { return simplify_pow(x, c); }),
                   // positive const ** x
                   TG_RULE(UPat::cvar("c").alu(Ops::POW, UPat::var("x")),
                           [](U c, U x) {
                             PyConst v = c.val();
                             if (v == PyConst(1)) return c;
                             return py_lt(PyConst(0), v) ? (x * PyConst(std::log2(v.as_float()))).exp2() : UOp();
                           }),
                   // unpack a uint64 packed from two uint32 (threefry)
                   TG_RULE(((UPat::var("", dtypes::uint64) << 32) | UPat::var("y", dtypes::uint32).cast(dtypes::uint64))
                               .cast(dtypes::uint32),
                           [](U y) { return y; }),
                   TG_RULE(((UPat::var("x", dtypes::uint32).cast(dtypes::uint64) << 32) |
                            UPat::var("", dtypes::uint32).cast(dtypes::uint64)) >>
                               32,
                           [](U x) { return x.cast(dtypes::uint64); }),
                   // ** simple where folding **
                   // a conditional with the same results either way is a noop, also fold const conditionals
                   TG_RULE(UPat::var().where(UPat::var("val"), UPat::var("val")), [](U val) { return val; }),
                   TG_RULE(UPat::cvar("gate").where(UPat::var("c0"), UPat::var("c1")).named("w"),
                           [](U gate, U c0, U c1, U w) { return fold_const_where(gate, c0, c1, w); }),
                   // a.where(b.where(c, d), d) -> (a & b).where(c, d)
                   TG_RULE(UPat::var("a").where(UPat::var("b").where(UPat::var("c"), UPat::var("d")), UPat::var("d")),
                           [](U a, U b, U c, U d) { return (a & b).where(c, d); }),
                   // a.where(c, b.where(c, d)) -> (a | b).where(c, d)
                   TG_RULE(UPat::var("a").where(UPat::var("c"), UPat::var("b").where(UPat::var("c"), UPat::var("d"))),
                           [](U a, U b, U c, U d) { return (a | b).where(c, d); }),
               }) +
           mop_cleanup();
  }();
  return pm;
}

// ******** phase 2: rules that match deeper ********

static UOp lt_folding(const UOp& x, pyint c) {
  std::vector<UOp> p, np;
  for (const UOp& u : x.split_uop(Ops::ADD)) (u.const_factor() == PyConst(1) ? p : np).push_back(u);
  if (np.empty()) return UOp();
  pyint d = c;
  for (const UOp& u : np) {
    pyint a = py::iabs(u.const_factor().as_int()), b = py::iabs(d);
    while (b) {
      pyint t = a % b;
      a = b;
      b = t;
    }
    d = a;
  }
  if (d <= 1) return UOp();
  PyConst smin(0), smax(0);
  for (const UOp& u : p) smin = py_add(smin, u.vmin()), smax = py_add(smax, u.vmax());
  if (py_lt(smin, PyConst(0)) || !py_lt(smax, PyConst(d))) return UOp();
  UOp dv = UOp::usum_of(np).divides(d);
  if (!dv) throw Error("lt_folding: unwrap of None");
  return dv < PyConst(py::fdiv(c, d));
}

// (X := a0*x0 + a1*x1 + ...) > 0 is equivalent to x0 + x1 + ... > 0 if xi >= 0 and ai > 0 for ints
static UOp canonicalize_simplex(const UOp& X) {
  bool changed = false;
  std::vector<UOp> ret;
  for (UOp u : X.split_uop(Ops::ADD)) {
    if (u.op() == Ops::MUL && u.src(1).op() == Ops::CONST && py_lt(PyConst(0), u.src(1).val())) {
      changed = true;
      u = u.src(0);
    }
    if (!(GroupOp::Irreducible.has(u.op()) && !py_lt(u.vmin(), PyConst(0)))) return UOp();
    ret.push_back(u);
  }
  return changed ? UOp::usum_of(ret) : UOp();
}

const PatternMatcher& commutative() {
  static const PatternMatcher pm(
      "commutative",
      {
          // ** COMMUTATIVE flipping (only for index) **
          TG_RULE(UPat(GroupOp::Commutative).dtype(dtypes::weakint).named("x"),
                  [](U x) {
                    return UOp::tuplize_cmp(x.src(1), x.src(0)) < 0 ? x.with_src({x.src(1), x.src(0)}) : UOp();
                  }),
      });
  return pm;
}

// ***** SymbolicMemo: results of pure helpers, per kernel's codegen and per schedule *****
namespace {
enum class MemoKind : uint8_t { GivenValid, GivenValidSimplex, WhereClosure };
struct MemoKey {
  UOp a, b, c;
  MemoKind kind;
  bool operator==(const MemoKey& o) const { return kind == o.kind && a == o.a && b == o.b && c == o.c; }
};
struct MemoKeyHash {
  size_t operator()(const MemoKey& k) const {
    size_t h = (size_t)k.kind;
    for (const UOp* u : {&k.a, &k.b, &k.c}) h = (h ^ (*u ? u->ptr_hash() : 0)) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
  }
};
using MemoMap = std::unordered_map<MemoKey, UOp, MemoKeyHash>;
thread_local MemoMap* t_memo = nullptr;

// compute(), remembered in the thread's open memo when nothing is counted or recorded (then it is a pure function)
template <typename F>
UOp memoized(MemoKind kind, const UOp& a, const UOp& b, const UOp& c, F&& compute) {
  if (!t_memo || TRACK_MATCH_STATS.value() != 0) return compute();
  MemoKey key{a, b, c, kind};
  if (auto it = t_memo->find(key); it != t_memo->end()) return it->second;
  UOp r = compute();
  t_memo->emplace(std::move(key), r);  // compute() may have grown the map: insert anew
  return r;
}
}  // namespace

SymbolicMemo::SymbolicMemo() {
  if (t_memo) return;  // nested: the outer memo serves
  t_memo = new MemoMap();
  owner_ = true;
}
SymbolicMemo::~SymbolicMemo() {
  if (!owner_) return;
  delete t_memo;
  t_memo = nullptr;
}

// in cond.where(t, f), cond is True within t and False within f
static UOp fold_where_closure_impl(const UOp& cond, const UOp& t, const UOp& f) {
  if (!t.in_backward_slice_with_self(cond) && !f.in_backward_slice_with_self(cond)) return UOp();
  // INDEX gates are owned by the valid/store-coalescing machinery, leave them alone
  for (const UOp* u : {&cond, &t, &f})
    if (u->op_in_backward_slice_with_self(Ops::INDEX)) return UOp();
  return cond.where(t.substitute({{cond, cond.const_like(PyConst(true))}}),
                    f.substitute({{cond, cond.const_like(PyConst(false))}}));
}
static UOp fold_where_closure(const UOp& cond, const UOp& t, const UOp& f) {
  return memoized(MemoKind::WhereClosure, cond, t, f, [&] { return fold_where_closure_impl(cond, t, f); });
}

static UOp two_stage_alu(const UOp& f, const UOp& x, const UOp& c1, const UOp& c2) {
  return x.alu(f.op(), c1.alu(f.op(), c2));
}

static std::vector<UOp> dedup(const std::vector<UOp>& v) {
  std::vector<UOp> out;
  for (const UOp& x : v)
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  return out;
}

const PatternMatcher& symbolic() {
  static const PatternMatcher pm = [] {
    DTypes int_or_weak = dtypes::ints + DTypes{dtypes::weakint};
    std::vector<PatternMatcher::Entry> assoc;
    // two stage ALU folding, for op in GroupOp.Associative (python set order: ADD, MUL, MAX, OR, AND)
    for (Ops op : {Ops::ADD, Ops::MUL, Ops::MAX, Ops::OR, Ops::AND})
      assoc.push_back(TG_RULE(UPat::var("x").alu(op, UPat::cvar("c1")).alu(op, UPat::cvar("c2")).named("f"),
                              [](U f, U x, U c1, U c2) { return two_stage_alu(f, x, c1, c2); }));
    std::vector<PatternMatcher::Entry> rules = {
        // ** boolean algebra **
        TG_RULE(UPat::var("x", dtypes::bool_) | UPat::var("x", dtypes::bool_).logical_not(),
                [](U x) { return x.const_like(PyConst(true)); }),
        // ** combine terms **
        TG_RULE(UPat::var("x") * UPat::cvar("c0") + UPat::var("x") * UPat::cvar("c1"),
                [](U x, U c0, U c1) { return x * (c0 + c1); }),
        TG_RULE((UPat::var("y") + UPat::var("x") * UPat::cvar("c0")) + UPat::var("x") * UPat::cvar("c1"),
                [](U x, U y, U c0, U c1) { return y + x * (c0 + c1); }),
        TG_RULE(UPat::var("x") + UPat::var("x") * UPat::cvar("c"), [](U x, U c) { return x * (c + ic(1)); }),
        TG_RULE((UPat::var("y") + UPat::var("x")) + UPat::var("x") * UPat::cvar("c"),
                [](U x, U y, U c) { return y + x * (c + ic(1)); }),
        TG_RULE((UPat::var("y") + UPat::var("x") * UPat::cvar("c")) + UPat::var("x"),
                [](U x, U y, U c) { return y + x * (c + ic(1)); }),
        TG_RULE(UPat::var("x") + UPat::var("x"), [](U x) { return x * ic(2); }),
        TG_RULE((UPat::var("y") + UPat::var("x")) + UPat::var("x"), [](U y, U x) { return y + x * ic(2); }),
        TG_RULE((UPat::var("x") / UPat::var("x2")) / UPat::var("x3"),
                [](U x, U x2, U x3) { return !(x2 == x3) ? x / (x2 * x3) : UOp(); }),
        TG_RULE(-1 * (UPat::var("x") + UPat::cvar("c")), [](U x, U c) { return (-x) + (-c); }),
        TG_RULE(UPat::cvar("y") * (UPat::var("x", dtypes::weakint) + UPat::cvar("c")),
                [](U x, U y, U c) { return (y * x) + (y * c); }),
        // ** where folding **
        TG_RULE(UPat::var("cond", dtypes::bool_).logical_not().where(UPat::var("t"), UPat::var("f")),
                [](U cond, U t, U f) { return !f.is_invalid() ? cond.where(f, t) : UOp(); }),
        // in cond.where(t, f), uses of cond fold to True within t and False within f
        TG_RULE(UPat::var("cond", dtypes::bool_).where(UPat::var("t"), UPat::var("f")),
                [](U cond, U t, U f) { return fold_where_closure(cond, t, f); }),
        // alu of two where with same conds can combine, only do if true branch or false branch is const
        TG_RULE(UPat(GroupOp::Binary)
                    .named("alu")
                    .src(UPat::var("c").where(UPat::var("t"), UPat::var("f")),
                         UPat::var("c").where(UPat::var("tt"), UPat::var("ff"))),
                [](U alu, U c, U t, U tt, U f, U ff) {
                  bool ok =
                      (t.op() == tt.op() && tt.op() == Ops::CONST) || (f.op() == ff.op() && ff.op() == Ops::CONST);
                  return ok ? c.where(t.alu(alu.op(), tt), f.alu(alu.op(), ff)) : UOp();
                }),
        // if its a plus we add the associative variation too
        TG_RULE((UPat::var("y") + UPat::var("c").where(UPat::var("t"), UPat::var("f"))) +
                    UPat::var("c").where(UPat::var("tt"), UPat::var("ff")),
                [](U y, U c, U t, U tt, U f, U ff) {
                  bool ok =
                      (t.op() == tt.op() && tt.op() == Ops::CONST) || (f.op() == ff.op() && ff.op() == Ops::CONST);
                  return ok ? y + c.where(t + tt, f + ff) : UOp();
                }),
        // complementary zero branches under the same condition select directly
        TG_RULE(UPat::var("c").where(UPat::var("t"), 0) + UPat::var("c").where(0, UPat::var("f")),
                [](U c, U t, U f) { return c.where(t, f); }),
        // ALU/variable min==max -> CONST
        TG_RULE(UPat(ops(Ops::CMPLT, Ops::CMPNE, Ops::FLOORDIV, Ops::FLOORMOD, Ops::PARAM, Ops::AFTER, Ops::SPECIAL))
                    .named("x"),
                [](U x) { return x.vmin() == x.vmax() ? x.const_like(x.vmin()) : UOp(); }),
        TG_RULE(UPat(Ops::RANGE).src_all(UPat(Ops::CONST)).named("x"),
                [](U x) { return x.vmin() == x.vmax() ? x.const_like(x.vmin()) : UOp(); }),
        // max folding
        TG_RULE((UPat::cvar("a") < UPat::var("b")).where(UPat::var("b"), UPat::cvar("c")),
                [](U a, U b, U c) { return a.val() == c.val() ? a.maximum(b) : UOp(); }),
        TG_RULE((UPat::var("a") < UPat::cvar("b")).where(UPat::cvar("c"), UPat::var("a")),
                [](U a, U b, U c) { return b.val() == c.val() ? a.maximum(b) : UOp(); }),
        TG_RULE(UPat::var("x").maximum(UPat::var("y")),
                [](U x, U y) {
                  if (!py_lt(x.vmin(), y.vmax())) return x;
                  if (!py_lt(y.vmin(), x.vmax())) return y;
                  return UOp();
                }),
    };
    rules.insert(rules.end(), std::make_move_iterator(assoc.begin()), std::make_move_iterator(assoc.end()));
    std::vector<PatternMatcher::Entry> rest = {
        // (x//c1)//c2 -> x//(c1*c2) for c2>0
        TG_RULE((UPat::var("x").floordiv(UPat::cvar("c1"))).floordiv(UPat::cvar("c2")),
                [](U x, U c1, U c2) { return py_lt(PyConst(0), c2.vmin()) ? x.floordiv(c1 * c2) : UOp(); }),
        // ** lt **
        // c0+x<c1 -> x < c1-c0
        TG_RULE((UPat::cvar("c0") + UPat::var("x", int_or_weak)) < UPat::cvar("c1"),
                [](U x, U c0, U c1) { return x < (c1 - c0); }),
        // c0*x<c1 -> sign(c0)*x < ceil(c1/abs(c0))
        TG_RULE((UPat::cvar("c0") * UPat::var("x", dtypes::weakint)) < UPat::cvar("c1"),
                [](U x, U c0, U c1) {
                  pyint a = c0.val().as_int(), b = c1.val().as_int();
                  if (py::iabs(a) <= 1) return UOp();
                  return (a > 0 ? x : -x) < PyConst(-py::fdiv(-b, py::iabs(a)));
                }),
        // x//d<c -> x<c*d for d>0, and -> c*d<x for d<0
        TG_RULE((UPat::var("x", dtypes::weakint).floordiv(UPat::cvar("d"))) < UPat::cvar("c"),
                [](U x, U d, U c) {
                  pyint dv = d.val().as_int(), cv = c.val().as_int();
                  return dv > 0 ? x < PyConst(cv * dv) : dv < 0 ? x > PyConst(cv * dv) : UOp();
                }),
        // ** move add/mul consts to end **
        TG_RULE((UPat::var("x") + UPat::cvar("c1")) + UPat::var("y"),
                [](U x, U c1, U y) { return y.op() != Ops::CONST ? (x + y) + c1 : UOp(); })
            .when(const_sum_and_non_const),
        TG_RULE((UPat::var("x") * UPat::cvar("c1")) * UPat::var("y"),
                [](U x, U c1, U y) { return y.op() != Ops::CONST ? (x * y) * c1 : UOp(); }),
        // generic lt folding
        TG_RULE(UPat::var("x", dtypes::weakint) < UPat::cvar("c"),
                [](U x, U c) { return py_lt(PyConst(0), c.val()) ? lt_folding(x, c.val().as_int()) : UOp(); }),
        TG_RULE(UPat::var("x", dtypes::weakint) * -1 < UPat::var("y") * -1, [](U x, U y) { return y < x; }),
        // canonicalize a simplex with positive coefficients > 0. NOTE: not x < 1 means x > 0
        TG_RULE((UPat::var("x", dtypes::weakint) < 1).ne(UPat(PyConst(true))),
                [](U x) {
                  UOp newx = canonicalize_simplex(x);
                  return newx ? (newx < PyConst(1)).ne(UOp::const_(PyConst(true))) : UOp();
                }),
        // a range mod its own upper bound is just the range
        TG_RULE(UPat(Ops::RANGE).src_all(UPat::var("end")).named("r") % UPat::var("end"), [](U r, U end) { return r; }),
        TG_RULE(UPat(Ops::RANGE).src_all(UPat::var("end")).named("r").floordiv(UPat::var("end")),
                [](U r, U end) { return r.const_like(0); }),
        // cast/long folding: if the intermediate cast doesnt narrow we can do it in one cast
        TG_RULE(UPat::var("x").cast().named("a").cast().named("b"),
                [](U x, U a, U b) { return can_lossless_cast(x.dtype(), a.dtype()) ? x.cast(b.dtype()) : UOp(); }),
        TG_RULE(UPat::var("x", int_or_weak).cast(int_or_weak).named("a").cast().named("b"),
                [](U x, U a, U b) {
                  return !py_lt(x.vmin(), a.dtype().min()) && !py_lt(a.dtype().max(), x.vmax()) ? x.cast(b.dtype())
                                                                                                : UOp();
                }),
        // try to do math in int instead of long, keep weak const weak
        TG_RULE(UPat(GroupOp::Binary)
                    .src(UPat::var("x", DTypes{dtypes::int64, dtypes::weakint}),
                         UPat::var("y", DTypes{dtypes::int64, dtypes::weakint}))
                    .named("u"),
                [](U u, U x, U y) {
                  if (x.dtype() != dtypes::int64 && y.dtype() != dtypes::int64) return UOp();
                  for (const UOp* v : {&u, &x, &y})
                    if (v->overflows(dtypes::int32)) return UOp();
                  UOp xx = x.op() == Ops::CONST ? UOp::const_(x.val()) : x.cast(dtypes::int32);
                  UOp yy = y.op() == Ops::CONST ? UOp::const_(y.val()) : y.cast(dtypes::int32);
                  return xx.alu(u.op(), yy).cast(u.dtype());
                })
            .when([](U u) { return u.src(0).dtype() == dtypes::int64 || u.src(1).dtype() == dtypes::int64; }),
        TG_RULE((UPat::var("x", dtypes::weakint) + UPat::cvar("c")).cast(dtypes::sints).named("cast"),
                [](U x, U c, U cast) { return x.cast(cast.dtype()) + cast.const_like(c.val()); }),
        // only RANGE/IF/STORE/KERNEL have side effects
        TG_RULE(UPat(Ops::AFTER).named("x"),
                [](U x) {
                  OpSet keep = ops(Ops::RANGE, Ops::STORE, Ops::CALL, Ops::FUNCTION, Ops::BARRIER, Ops::END,
                                   Ops::LINEAR, Ops::STAGE);
                  std::vector<UOp> flat;
                  for (size_t i = 1; i < x.nsrc(); i++) {
                    const UOp& y = x.src(i);
                    if (keep.has(y.op()))
                      flat.push_back(y);
                    else
                      flat.insert(flat.end(), y.src().begin(), y.src().end());
                  }
                  std::vector<UOp> src{x.src(0)};
                  for (const UOp& s : dedup(flat)) src.push_back(s);
                  return x.with_src(src);
                }),
        // after/end with 1 src is just src[0]
        TG_RULE(UPat(ops(Ops::AFTER, Ops::END)).src(UPat::var("s")), [](U s) { return s; }),
    };
    rules.insert(rules.end(), std::make_move_iterator(rest.begin()), std::make_move_iterator(rest.end()));
    return symbolic_simple() + commutative() + PatternMatcher("symbolic", std::move(rules)) + div_and_mod_symbolic();
  }();
  return pm;
}

// ******** simplify_valid: rewrite valids ********

struct ParsedValid {
  UOp expr;
  bool is_upper;
  pyint c;
};
// X <= c -> (X, True, c); X >= c -> (X, False, c)
static std::optional<ParsedValid> parse_valid(const UOp& v) {
  if (v.op() == Ops::CMPNE && v.src(1).op() == Ops::CONST && v.src(1).val() == PyConst(1)) {
    const UOp& s0 = v.src(0);
    if (s0.op() == Ops::CMPLT && dtypes::is_int(s0.src(0).dtype()))
      return ParsedValid{s0.src(0), false, s0.src(1).vmin().as_int()};
  }
  if (v.op() == Ops::CMPLT && dtypes::is_int(v.src(0).dtype())) {
    // c < X -> X >= c+1
    if (v.src(0).op() == Ops::CONST) return ParsedValid{v.src(1), false, v.src(0).val().as_int() + 1};
    return ParsedValid{v.src(0), true, v.src(1).vmax().as_int() - 1};
  }
  return std::nullopt;
}

static bool all_same(const std::vector<UOp>& v) {
  for (const UOp& x : v)
    if (!(x == v[0])) return false;
  return true;
}

namespace {
UOp uop_given_valid_impl(const UOp& valid, const UOp& uop0, bool try_simplex);
}  // namespace

UOp uop_given_valid(const UOp& valid, const UOp& uop, bool try_simplex) {
  return memoized(try_simplex ? MemoKind::GivenValidSimplex : MemoKind::GivenValid, valid, uop, UOp(),
                  [&] { return uop_given_valid_impl(valid, uop, try_simplex); });
}

namespace {
UOp uop_given_valid_impl(const UOp& valid, const UOp& uop0, bool try_simplex) {
  UOp uop = uop0;
  // parse valid into {expr: (lower_bound, upper_bound)}, insertion ordered
  std::vector<std::pair<UOp, std::pair<std::optional<pyint>, std::optional<pyint>>>> bounds;
  for (const UOp& stmt : valid.split_uop(Ops::AND)) {
    auto res = parse_valid(stmt);
    if (!res) continue;
    auto it = std::find_if(bounds.begin(), bounds.end(), [&](auto& b) { return b.first == res->expr; });
    if (it == bounds.end()) {
      bounds.push_back({res->expr, {}});
      it = bounds.end() - 1;
    }
    (res->is_upper ? it->second.second : it->second.first) = res->c;
  }
  std::vector<std::pair<UOp, UOp>> all_candidates;
  for (size_t i = 0; i < bounds.size(); i++) {
    const UOp& expr = bounds[i].first;
    PyConst v0 = bounds[i].second.first ? PyConst(*bounds[i].second.first) : expr.vmin();
    PyConst v1 = bounds[i].second.second ? PyConst(*bounds[i].second.second) : expr.vmax();
    // try checking the whole clause
    all_candidates.push_back({expr, UOp::variable("fake" + std::to_string(i), v0, v1, expr.dtype(), 1, true)});
    if (try_simplex) {
      std::vector<std::vector<std::pair<UOp, UOp>>> candidates{{all_candidates.back()}};
      if (expr.op() == Ops::ADD && v0 == PyConst(1)) {
        auto parts = expr.split_uop(Ops::ADD);
        bool all_irr = true;
        for (const UOp& u : parts) all_irr &= GroupOp::Irreducible.has(u.op());
        if (all_irr) {
          // a simplex X0 + X1 + ... > 0: check whether all Xi > 0 simplify into the same output
          std::vector<std::pair<UOp, UOp>> c;
          for (const UOp& Xi : parts)
            c.push_back({Xi, UOp::variable("fake" + std::to_string(i), PyConst(1), Xi.vmax(), Xi.dtype(), 1, true)});
          candidates.push_back(c);
        }
      }
      for (const auto& candidate : candidates) {
        bool skip = false;
        for (const auto& [X, nx] : candidate) skip |= !uop.in_backward_slice_with_self(X);
        if (skip) continue;
        std::vector<UOp> newuops;
        for (const auto& [X, newX] : candidate)
          newuops.push_back(uop.substitute({{X, newX}}).simplify().substitute({{newX, X}}).simplify());
        if (all_same(newuops)) {
          uop = newuops[0];
        } else if (uop.op() == Ops::STACK && uop.nsrc() == 2) {
          std::vector<UOp> s0, s1;
          for (const UOp& n : newuops) s0.push_back(n.src(0)), s1.push_back(n.src(1));
          if (all_same(s0)) uop = uop.with_src({newuops[0].src(0), uop.src(1)});
          if (all_same(s1)) uop = uop.with_src({uop.src(0), newuops[0].src(1)});
        }
      }
    }
  }
  // try all the valids together (but only the whole expressions)
  UOp s_uop = uop.substitute(all_candidates);
  if (!(s_uop == uop)) {
    std::vector<std::pair<UOp, UOp>> back;
    for (const auto& [X, newX] : all_candidates) back.push_back({newX, X});
    uop = s_uop.simplify().substitute(back).simplify();
  }
  return uop;
}
}  // namespace

// valids that are in other valids' parents go first, so the others are more likely to simplify
static int valid_priority(const UOp& v, const std::vector<UOp>& valids) {
  auto res = parse_valid(v);
  if (!res) return 0;
  int s = 0;
  for (const UOp& other : valids) s -= other.in_backward_slice_with_self(res->expr) ? 1 : 0;
  return s;
}

UOp simplify_valid(const UOp& valid) {
  if (valid.op_in_backward_slice_with_self(Ops::INDEX)) return UOp();
  std::vector<UOp> valids = valid.split_uop(Ops::AND);
  std::vector<int> prio;
  for (const UOp& v : valids) prio.push_back(valid_priority(v, valids));
  std::vector<size_t> order(valids.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return prio[a] < prio[b]; });
  std::vector<UOp> sorted;
  for (size_t i : order) sorted.push_back(valids[i]);
  std::vector<UOp> ret;
  for (UOp stmt : dedup(sorted)) {
    if (!ret.empty()) stmt = uop_given_valid(UOp::uprod_of(ret), stmt);
    ret.push_back(stmt);
  }
  bool same = ret.size() == sorted.size();
  for (size_t i = 0; same && i < ret.size(); i++) same = ret[i] == sorted[i];
  return same ? UOp() : UOp::uprod_of(ret);
}

static UOp gated_given_valid(const UOp& cond, const UOp& x, const UOp& i) {
  // pure index math only: a LOAD in x executes even where cond is false, so its INDEX valid must survive
  if (x.dtype() != dtypes::weakint || x.op_in_backward_slice_with_self(Ops::INDEX)) return UOp();
  return cond.where(uop_given_valid(cond, x, false), i);
}

const PatternMatcher& pm_simplify_valid() {
  static const PatternMatcher pm(
      "pm_simplify_valid", {
                               TG_RULE(UPat(Ops::AND).named("valid"), [](U valid) { return simplify_valid(valid); }),
                               TG_RULE(invalid_gate(), [](U cond, U x, U i) { return gated_given_valid(cond, x, i); }),
                           });
  return pm;
}

static UOp reduce_mul_chain(const UOp& r) {
  Ops rop = r.arg()[0].as_op();
  if (rop != Ops::ADD && rop != Ops::MAX) return UOp();
  if (r.dtype() != r.src(0).dtype()) return UOp();
  std::vector<UOp> inside, outside;
  std::vector<UOp> rngs(r.src().begin() + 1, r.src().end());
  for (const UOp& m : r.src(0).split_uop(Ops::MUL)) {
    bool out = std::find(rngs.begin(), rngs.end(), m) == rngs.end();
    for (const UOp& rr : rngs) out = out && !(m.in_backward_slice_with_self(rr) && !(m == rr));
    if (out && rop == Ops::MAX) out = !py_lt(m.vmin(), PyConst(0));
    (out ? outside : inside).push_back(m);
  }
  if (outside.empty()) return UOp();
  std::vector<UOp> src{inside.empty() ? r.src(0).const_like(1) : py_prod(inside)};
  src.insert(src.end(), rngs.begin(), rngs.end());
  return r.with_src(src) * py_prod(outside);
}

static UOp drop_and_clauses(const UOp& cond, const UOp& x, const UOp& i) {
  std::vector<UOp> keep;
  bool drop = false;
  auto xr = x.ranges();
  for (const UOp& c : cond.split_uop(Ops::AND)) {
    bool k = false;
    for (const UOp& r : c.ranges()) k |= std::find(xr.begin(), xr.end(), r) != xr.end();
    if (k)
      keep.push_back(c);
    else
      drop = true;
  }
  return drop ? UOp::const_(PyConst(true)).uprod(keep).where(x, i) : UOp();
}

const PatternMatcher& pm_drop_and_clauses() {
  static const PatternMatcher pm(
      "pm_drop_and_clauses", {
                                 TG_RULE(invalid_gate(), [](U cond, U x, U i) { return drop_and_clauses(cond, x, i); }),
                             });
  return pm;
}

// move conditions from where to load's valid, drop clauses already in load
static UOp where_on_load(const UOp& cond, const UOp& buf, const UOp& idx, const UOp& or_cast) {
  std::vector<UOp> where_clauses = cond.split_uop(Ops::AND);
  UOp load_valid = idx.get_valid();
  std::vector<UOp> in_load = load_valid.split_uop(Ops::AND);
  std::vector<UOp> idx_index;
  for (const UOp& u : idx.toposort())
    if (u.op() == Ops::INDEX) idx_index.push_back(u);
  auto idx_ranges = idx.ranges();
  auto can_move = [&](U c) {
    for (const UOp& r : c.ranges())
      if (std::find(idx_ranges.begin(), idx_ranges.end(), r) == idx_ranges.end()) return false;
    for (const UOp& u : c.toposort())
      if (u.op() == Ops::INDEX && std::find(idx_index.begin(), idx_index.end(), u) == idx_index.end()) return false;
    return true;
  };
  std::vector<UOp> moved, keep;
  for (const UOp& c : where_clauses) {
    if (std::find(in_load.begin(), in_load.end(), c) != in_load.end()) continue;
    (can_move(c) ? moved : keep).push_back(c);
  }
  if (keep.size() == where_clauses.size()) return UOp();
  UOp nidx = buf.index(idx.get_idx().valid(load_valid.uprod(moved)));
  UOp ret_idx = or_cast.op() == Ops::CAST ? nidx.cast(or_cast.dtype()) : nidx;
  return UOp::const_(PyConst(true)).uprod(keep).where(ret_idx, ret_idx.const_like(0));
}

const PatternMatcher& pm_move_where_on_load() {
  static const PatternMatcher pm(
      "pm_move_where_on_load",
      {
          TG_RULE(UPat::var("cond").where(UPat::var("buf").index(UPat::var("idx")).or_casted("or_cast"), 0),
                  [](U cond, U buf, U idx, U or_cast) { return where_on_load(cond, buf, idx, or_cast); }),
          TG_RULE(UPat::var("cond").where(0, UPat::var("buf").index(UPat::var("idx")).or_casted("or_cast")),
                  [](U cond, U buf, U idx, U or_cast) { return where_on_load(cond.logical_not(), buf, idx, or_cast); }),
      });
  return pm;
}

const PatternMatcher& pm_clean_up_group_sink() {
  static const PatternMatcher pm("pm_clean_up_group_sink",
                                 {
                                     TG_RULE(UPat(Ops::GROUP).src(UPat::var("x")), [](U x) { return x; }),
                                     TG_RULE(UPat(ops(Ops::SINK, Ops::GROUP)).named("root"),
                                             [](U root) {
                                               OpSet rm = ops(Ops::NOOP, Ops::STACK, Ops::SINK, Ops::GROUP);
                                               bool any = false;
                                               std::vector<UOp> src;
                                               for (const UOp& x : root.src()) {
                                                 if (rm.has(x.op()))
                                                   any = true, src.insert(src.end(), x.src().begin(), x.src().end());
                                                 else
                                                   src.push_back(x);
                                               }
                                               return any ? UOp(root.op(), DType(), src, root.arg()) : UOp();
                                             }),
                                 });
  return pm;
}

const PatternMatcher& sym() {
  static const PatternMatcher pm = [] {
    UPat invalid_pat = ::tg::invalid_pat();
    return symbolic() + pm_simplify_valid() +
           PatternMatcher(
               "sym",
               {
                   // reorder ALU/VECTORIZE
                   TG_RULE(UPat(GroupOp::ALU)
                               .src(UPat(Ops::STACK).src_all(UPat().named("x")),
                                    UPat(Ops::STACK).src_all(UPat().named("y")))
                               .named("alu"),
                           [](U x, U y, U alu) {
                             return UOp(Ops::STACK, DType(), {UOp(alu.op(), DType(), {x, y})});
                           }),
                   // ** where ** push cast to branches
                   TG_RULE(UPat::var("s").where(UPat::var("a"), UPat::var("b")).cast().named("cast"),
                           [](U s, U a, U b, U cast) {
                             return s.where(commit_weak(a, cast.dtype()), commit_weak(b, cast.dtype()));
                           }),
                   // ** pow **
                   TG_RULE(UPat(Ops::POW).named("p"), [](U p) { return xpow(p.src(0), p.src(1)); }),
                   // ** load/store folding **
                   TG_RULE(UPat(Ops::INDEX).named("index").store(UPat(Ops::INDEX).named("index").load()),
                           [](U index) { return UOp(Ops::NOOP); }),
                   TG_RULE(
                       UPat(Ops::INDEX)
                           .named("index")
                           .store(UPat::var("gate").where(UPat::var("alt"), UPat(Ops::INDEX).named("index").load())),
                       [](U index, U gate, U alt) { return index.src(0).index(index.src(1).valid(gate)).store(alt); }),
                   // fold gated LOAD/STORE
                   TG_RULE(UPat(Ops::STORE).src(UPat(), invalid_pat), [](U i) { return UOp(Ops::NOOP); }),
                   // store of where with invalid -> gated store
                   TG_RULE(UPat(Ops::STORE)
                               .src(UPat(Ops::INDEX).named("index"),
                                    UPat::var("cond").where(UPat::var("val"), invalid_pat)),
                           [](U index, U cond, U val, U i) {
                             return index.src(0).index(index.src(1).valid(cond)).store(val);
                           }),
                   TG_RULE((UPat::var("x") * UPat::var("x")).reciprocal(),
                           [](U x) { return x.reciprocal() * x.reciprocal(); }),
                   TG_RULE((UPat::var("x") * UPat::var("x") * UPat::var("x")).reciprocal(),
                           [](U x) { return x.reciprocal() * x.reciprocal() * x.reciprocal(); }),
                   TG_RULE((UPat::var("x") * UPat::cvar("c")).reciprocal(),
                           [](U x, U c) { return x.reciprocal() * c.reciprocal(); }),
                   TG_RULE(UPat::var("x") * ((1 + UPat::var("x")).reciprocal().named("d")),
                           [](U x, U d) { return ic(1) - d; }),
                   TG_RULE(UPat::var("x") * ((1 + UPat::var("x")).reciprocal().named("d") * UPat::var("y")),
                           [](U x, U y, U d) { return y * (PyConst(1) - d); }),
                   TG_RULE(UPat::var("x") * ((1 + UPat::var("x")).reciprocal().named("d") + UPat::var("y")),
                           [](U x, U y, U d) { return (PyConst(1) - d) + x * y; }),
                   // move const multiply after REDUCE
                   TG_RULE((UPat::var("x") * UPat::cvar("c")).reduce(Ops::ADD).named("r").any_len(),
                           [](U x, U c, U r) {
                             std::vector<UOp> src{x};
                             src.insert(src.end(), r.src().begin() + 1, r.src().end());
                             return r.with_src(src) * c.val();
                           }),
                   // reduce mul chain, move muls after the reduce
                   TG_RULE(UPat(Ops::MUL).reduce_any().named("r").any_len(), [](U r) { return reduce_mul_chain(r); }),
                   // ** combine terms (opinionated) **
                   TG_RULE(-1 * (UPat::var("x") + UPat::var("y")), [](U x, U y) { return (-x) + (-y); }),
                   // (x+y)*c -> x*c+y*c. only for int, float has inf*0=nan issue
                   TG_RULE((UPat::var("x", dtypes::weakint) + UPat::var("y")) * UPat::cvar("c"),
                           [](U x, U y, U c) { return x * c + y * c; }),
               }) +
           pm_clean_up_group_sink();
  }();
  return pm;
}

// ******** UOp methods that live here (they need the symbolic matcher) ********

UOp UOp::simplify(bool tracked) const {
  if (op() == Ops::CONST) return *this;
  if (op() == Ops::SINK) {
    bool all = true;
    for (const UOp& s : src()) all &= s.op() == Ops::CONST || (s.op() == Ops::STACK && s.nsrc() == 0);
    if (all) return *this;
  }
  if (tracked) return graph_rewrite(*this, symbolic(), {.name = "simplify"});
  track::Untracked u;
  if (TRACK_MATCH_STATS.value() != 0) return graph_rewrite(*this, symbolic(), {.name = "simplify"});
  // nothing is recorded or counted: the rewrite is a pure function of the node (symbolic has no context), so its
  // result is kept in the node's cache, and the result, a fixed point of the rules, simplifies to itself (codegen and
  // the scheduler simplify the same index expressions again and again: valid gates, reshape indices, shapes),
  UOp r;
  if (detail::cached_simplify(node(), r)) return r ? r : *this;
  // and every node the rewrite visits keeps its result too: a later simplify() of an expression sharing nodes with
  // this one (uop_given_valid substitutes one variable into a simplified index, then simplifies again) takes them
  // from their caches instead of matching them again
  return graph_rewrite(*this, symbolic(), {.name = "simplify", .simplify_memo = true});
}

sint UOp::ssimplify() const {
  // an int literal after codegen's casted consts, CAST(int dtype, CONST): what simplify folds it to, without the
  // rewrite (every buffer's size and every shape arg is one then, and the renderer asks their shapes)
  if (op() == Ops::CAST && src(0).op() == Ops::CONST && src(0).arg().kind() == Arg::Kind::Int &&
      dtypes::is_int(dtype()))
    return sint(dtype().const_(src(0).val()).as_int());
  UOp r = simplify();
  if (r.op() == Ops::CAST && r.src(0).op() == Ops::CONST) return sint(r.dtype().const_(r.src(0).val()).as_int());
  if (r.op() == Ops::CONST) return sint(r.val().as_int());
  return sint(r);
}

}  // namespace tg
