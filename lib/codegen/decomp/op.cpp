#include "lib/codegen/decomp/op.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

namespace tg {

static PyConst I(pyint v) { return PyConst(v); }
static bool lt0(const PyConst& a) { return py_lt(a, PyConst(0)); }
static bool gt0(const PyConst& a) { return py_lt(PyConst(0), a); }
static int bit_length(pyint v) {
  int n = 0;
  for (unsigned __int128 u = (unsigned __int128)(v < 0 ? -v : v); u; u >>= 1) n++;
  return n;
}

// *** integer division ***
std::pair<pyint, pyint> magicgu(pyint vmax, pyint d) {
  // calculate m,s such that x//d == (x*m) >> s for all 0 <= x <= vmax, d>0; adapted from Hacker's Delight, Chapter 10
  pyint nc = (vmax + 1) / d * d - 1;
  int nbits = bit_length(vmax);
  for (int s = 0; s <= 2 * nbits; s++) {
    pyint two_s = (pyint)1 << s;
    if (two_s > sat_mul(nc, d - 1 - (two_s - 1) % d)) return {(two_s + d - 1 - (two_s - 1) % d) / d, s};
  }
  throw Error("magicgu failed");
}

UOp fast_idiv(const Renderer& ren, const UOp& x, pyint d, bool dont_cast) {
  // If d is a power of two this is not valid for signed ints!
  bool is_unsigned = !lt0(x.vmin()) || dtypes::is_unsigned(x.dtype());
  if (d <= 0) throw Error("Sign should have been taken out of divisor");
  pyint vmin = std::max(x.vmin().as_int(), x.dtype().min().as_int()),
        vmax = std::min(x.vmax().as_int(), x.dtype().max().as_int());
  if (vmin > -d && vmax < d) return x.const_like(I(0));
  auto [m, s] = magicgu(std::max(vmax, vmin < 0 ? -vmin : vmin), d);
  auto fits = [&](DType dt) { return sat_mul(m, vmin) >= dt.min().as_int() && sat_mul(m, vmax) <= dt.max().as_int(); };
  if (fits(x.dtype())) {
    UOp r = x.mul(I(m)).rshift(I(s));
    return is_unsigned ? r : r + x.lt(I(0)).where(x.ufix(I(1)), I(0));
  }
  // before we try casting to a larger dtype (slow), we see if there are powers of two in d we can shift to make x
  // smaller
  if (pyint f2 = d & -d; f2 > 1) {
    if (UOp ret = fast_idiv(ren, x.alu(Ops::CDIV, x.const_like(I(f2))), d / f2, true)) return ret;
  }
  if (dont_cast) return UOp();
  // the next integer width that holds x*m
  DType xd = x.dtype(), next;
  if (xd == dtypes::int8)
    next = dtypes::int16;
  else if (xd == dtypes::int16)
    next = dtypes::int32;
  else if (xd == dtypes::int32)
    next = dtypes::int64;
  else if (xd == dtypes::int64)
    next = dtypes::uint64;
  else if (xd == dtypes::uint8)
    next = dtypes::uint16;
  else if (xd == dtypes::uint16)
    next = dtypes::uint32;
  else if (xd == dtypes::uint32)
    next = dtypes::uint64;
  auto sup = ren.supported_dtypes();
  if (next && std::find(sup.begin(), sup.end(), next) != sup.end() && fits(next)) {
    UOp r = x.cast(next).mul(I(m)).rshift(I(s)).cast(xd);
    return is_unsigned ? r : r + x.lt(I(0)).where(x.ufix(I(1)), I(0));
  }
  return UOp();
}

// ***** threefry *****
UOp threefry2x32(const UOp& x, const UOp& key) {
  // split x and key from uint64 to two uint32
  UOp x0 = x.cast(dtypes::uint32), x1 = x.rshift(I(32)).cast(dtypes::uint32);
  UOp key0 = key.cast(dtypes::uint32), key1 = key.rshift(I(32)).cast(dtypes::uint32);
  const int rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  UOp ks[3] = {key1, key0.bitwise_xor(key1).bitwise_xor(I(0x1BD11BDA)), key0};
  UOp xr[2] = {x0 + ks[2], x1 + ks[0]};
  for (int i = 0; i < 5; i++) {
    for (int r : rotations[i % 2]) {
      UOp nx0 = xr[0] + xr[1];
      xr[1] = nx0.bitwise_xor(xr[1].lshift(I(r)) + xr[1].rshift(I(32 - r)));
      xr[0] = nx0;
    }
    xr[0] = xr[0] + ks[i % 3];
    xr[1] = ((xr[1] + ks[(i + 1) % 3]).add(I(i))).add(I(1));  // python: xr[1] + ks[...] + i + 1, two adds
  }
  return xr[1].cast(dtypes::uint64).lshift(I(32)).bitwise_or(xr[0].cast(dtypes::uint64));
}

// ***** decomposition patterns *****
static bool same_sign_case(const UOp& a, const UOp& b) {
  return (!lt0(a.vmin()) && gt0(b.vmin())) || (!gt0(a.vmax()) && lt0(b.vmax()));
}
static UOp floordiv_to_idiv(const UOp& a, const UOp& b) {
  if (same_sign_case(a, b)) return a.alu(Ops::CDIV, b);
  return a.alu(Ops::CDIV, b) - a.alu(Ops::CMOD, b).ne(I(0)).bitwise_and(a.lt(I(0)).ne(b.lt(I(0))));
}
static UOp floormod_to_mod(const UOp& a, const UOp& b) {
  if (same_sign_case(a, b)) return a.alu(Ops::CMOD, b);
  UOp r = a.alu(Ops::CMOD, b);
  // use where instead of mul to avoid being fused into MULACC (which int64 long-decomp doesn't handle)
  return r + r.ne(I(0)).bitwise_and(a.lt(I(0)).ne(b.lt(I(0)))).where(b, b.const_like(I(0)));
}
// powers_of_two = {2**i: i for i in range(64)}: the exponent, or -1 when v is not a key (python == across
// int/float/bool)
static int log2_exact(const PyConst& v) {
  pyint x;
  if (v.is_float()) {
    if (!(v.f >= 1 && v.f < 1.8446744073709552e19) || v.f != (double)(pyint)v.f) return -1;
    x = (pyint)v.f;
  } else if (v.is_int() || v.is_bool()) {
    x = v.as_int();
  } else {
    return -1;
  }
  for (int i = 0; i < 64; i++)
    if (((pyint)1 << i) == x) return i;
  return -1;
}

using OpsKey = std::vector<Ops>;
static bool has(const OpsKey& ops, Ops o) { return std::find(ops.begin(), ops.end(), o) != ops.end(); }

static PatternMatcher make_simplifying(const OpsKey& ops) {
  PatternMatcher pm("get_simplifying_rewrite_patterns", {});
  // FLOORDIV by 2**y -> x >> y (an arithmetic shift is exactly floor division for any sign)
  if (has(ops, Ops::SHR))
    pm = pm + PatternMatcher("get_simplifying_rewrite_patterns",
                             {
                                 TG_RULE(UPat::var("x", dtypes::ints).floordiv(UPat::cvar("c")),
                                         [](U x, U c) {
                                           int v = log2_exact(c.val());
                                           return v > 0 ? x.rshift(I(v)) : UOp();
                                         }),
                             });
  pm = pm + PatternMatcher(
                "get_simplifying_rewrite_patterns",
                {
                    TG_RULE(UPat::var("a").floordiv(UPat::var("b")), [](U a, U b) { return floordiv_to_idiv(a, b); }),
                });
  // FLOORMOD by 2**y -> x & (2**y-1) (correct floor mod for any sign in two's complement)
  if (has(ops, Ops::AND))
    pm = pm + PatternMatcher("get_simplifying_rewrite_patterns",
                             {
                                 TG_RULE(UPat::var("x", dtypes::ints) % UPat::cvar("c"),
                                         [](U x, U c) {
                                           return log2_exact(c.val()) >= 0 ? x.bitwise_and(I(c.val().as_int() - 1))
                                                                           : UOp();
                                         }),
                             });
  pm = pm + PatternMatcher("get_simplifying_rewrite_patterns",
                           {
                               TG_RULE(UPat::var("a") % UPat::var("b"), [](U a, U b) { return floormod_to_mod(a, b); }),
                           });
  // no real hardware supports THREEFRY, but NullRenderer does
  if (!has(ops, Ops::THREEFRY))
    pm =
        pm + PatternMatcher("get_simplifying_rewrite_patterns",
                            {
                                TG_RULE(UPat(Ops::THREEFRY).dtype(dtypes::uint64).src(UPat::var("x"), UPat::var("key")),
                                        [](U x, U key) { return threefry2x32(x, key); }),
                            });
  // MAX can be rewritten as CMPLT + WHERE (max function is annoying on many cstyle backends)
  if (!has(ops, Ops::MAX) && has(ops, Ops::CMPLT))
    pm = pm + PatternMatcher("get_simplifying_rewrite_patterns",
                             {
                                 TG_RULE(UPat(Ops::MAX).named("m"),
                                         [](U m) { return m.src(0).lt(m.src(1)).where(m.src(1), m.src(0)); }),
                             });
  return pm;
}

static PatternMatcher make_late(const OpsKey& ops, bool disable_fast_idiv) {
  PatternMatcher pm("get_late_rewrite_patterns", {});
  auto add = [&](PatternMatcher p) { pm = pm + p; };
  if (has(ops, Ops::OR))
    add(PatternMatcher("get_late_rewrite_patterns", {
                                                        TG_RULE(UPat::var("x", dtypes::bool_).logical_not() &
                                                                    UPat::var("y", dtypes::bool_).logical_not(),
                                                                [](U x, U y) { return x.bitwise_or(y).logical_not(); }),
                                                    }));
  // rewrite MUL/CDIV to SHL+SHR: x*(2**y) -> shl(x,y) and x//(2**y) -> shr(x,y)
  if (has(ops, Ops::SHL))
    add(PatternMatcher("get_late_rewrite_patterns", {
                                                        TG_RULE(UPat::var("x", dtypes::ints) * UPat::cvar("c"),
                                                                [](U c, U x) {
                                                                  int v = log2_exact(c.val());
                                                                  return v > 0 ? x.lshift(I(v)) : UOp();
                                                                }),
                                                    }));
  if (has(ops, Ops::SHR)) {
    add(PatternMatcher(
        "get_late_rewrite_patterns",
        {
            // uint CDIV by 2**v -> x >> v (FLOORDIV is lowered to CDIV by the rule above before reaching here)
            TG_RULE(UPat(Ops::CDIV).src(UPat::var("x", dtypes::uints), UPat::cvar("c")),
                    [](U x, U c) {
                      int v = log2_exact(c.val());
                      return v > 0 ? x.rshift(I(v)) : UOp();
                    }),
            // signed CDIV (trunc) by 2**v -> (x + (x<0 ? c-1 : 0)) >> v
            TG_RULE(UPat(Ops::CDIV).src(UPat::var("x", dtypes::ints), UPat::cvar("c")),
                    [](U x, U c) {
                      int v = log2_exact(c.val());
                      if (v <= 0) return UOp();
                      UOp l = x.lt(I(0));
                      UOp g = l.vmin() == l.vmax() ? l.const_like(l.vmin()) : l;
                      return (x + g.where(c.sub(I(1)), I(0))).rshift(I(v));
                    }),
        }));
    if (!disable_fast_idiv)
      add(PatternMatcher(
          "get_late_rewrite_patterns",
          {
              // fast_idiv handles non-pow2: only fire on non-negative inputs (signed magic-mul is unreliable for x<0)
              TG_RULE(UPat(Ops::CDIV).src(UPat::var("x", dtypes::ints), UPat::cvar("d")),
                      [](const Renderer& ctx, U x, U d) {
                        return !lt0(x.vmin()) || dtypes::is_unsigned(x.dtype()) ? fast_idiv(ctx, x, d.val().as_int())
                                                                                : UOp();
                      }),
              // rewrite raw CMOD -> x - d*CDIV(x,d) so fast_idiv can pick up the CDIV. only on non-negative inputs
              TG_RULE(UPat(Ops::CMOD).src(UPat::var("x", dtypes::ints), UPat::var("d")),
                      [](U x, U d) {
                        return !lt0(x.vmin()) || dtypes::is_unsigned(x.dtype()) ? x - d * x.alu(Ops::CDIV, d) : UOp();
                      }),
          }));
  }
  if (has(ops, Ops::NEG)) {
    add(PatternMatcher("get_late_rewrite_patterns",
                       {
                           TG_RULE(UPat::var("x") * -1, [](U x) { return x.alu(Ops::NEG); }),
                       }));
    if (has(ops, Ops::SUB))
      add(PatternMatcher("get_late_rewrite_patterns", {
                                                          TG_RULE(UPat::var("x") + UPat::var("y").alu(Ops::NEG),
                                                                  [](U x, U y) { return x.alu(Ops::SUB, y); }),
                                                      }));
  }
  if (has(ops, Ops::CMPLT))
    // These are late rewrites because simplex expects equalities to be a certain format
    add(PatternMatcher(
        "get_late_rewrite_patterns",
        {
            TG_RULE((UPat::var("x", dtypes::sints) < UPat::cvar("c")).logical_not(),
                    [](U x, U c) { return c.sub(I(1)).lt(x); }),
            TG_RULE((UPat::cvar("c") < UPat::var("x", dtypes::sints)).logical_not(),
                    [](U x, U c) { return x.lt(c.add(I(1))); }),
            TG_RULE(UPat::var("x", dtypes::sints) * -1 < UPat::var("y", dtypes::sints) * UPat::cvar("c"),
                    [](U x, U y, U c) { return (y * (-c)).lt(x); }),
            TG_RULE(UPat::var("x", dtypes::sints) * -1 < UPat::cvar("c"), [](U x, U c) { return (-c).lt(x); }),
            // (c-1)<x & x<(c+1) -> x==c
            TG_RULE(
                (UPat::cvar("c1") < UPat::var("x", dtypes::sints)) & (UPat::var("x", dtypes::sints) < UPat::cvar("c2")),
                [](U x, U c1, U c2) {
                  return py_add(c1.val(), PyConst(1)) == py_sub(c2.val(), PyConst(1)) ? x.eq(c1.add(I(1))) : UOp();
                }),
        }));
  if (has(ops, Ops::CMPEQ))
    add(PatternMatcher("get_late_rewrite_patterns", {
                                                        TG_RULE(UPat::var("x").ne(UPat::var("y")).logical_not(),
                                                                [](U x, U y) { return x.alu(Ops::CMPEQ, y); }),
                                                    }));
  if (has(ops, Ops::MULACC)) {
    add(PatternMatcher("get_late_rewrite_patterns", {
                                                        TG_RULE(UPat::var("a") * UPat::var("b") + UPat::var("c"),
                                                                [](U a, U b, U c) { return a.alu(Ops::MULACC, b, c); }),
                                                    }));
    // also fuse (x << n) + c -> MULACC(x, 2^n, c) since MUL->SHL may run first
    if (has(ops, Ops::SHL))
      add(PatternMatcher("get_late_rewrite_patterns",
                         {
                             TG_RULE(UPat::var("x").alu(Ops::SHL, UPat::cvar("n")) + UPat::var("c"),
                                     [](U x, U n, U c) {
                                       return x.alu(Ops::MULACC, x.const_like(I((pyint)1 << (int)n.val().as_int())), c);
                                     }),
                         }));
  }
  // some backends emit FDIV for RECIP, in that case: a*(1/b) -> a/b
  if (has(ops, Ops::FDIV))
    add(PatternMatcher(
        "get_late_rewrite_patterns",
        {
            TG_RULE(UPat::var("x").reciprocal(), [](U x) { return UOp::const_(PyConst(1.0)).alu(Ops::FDIV, x); }),
            TG_RULE(
                UPat::var("a") * UPat(Ops::FDIV).dtype(dtypes::floats).src(UPat::const_(PyConst(1)), UPat::var("b")),
                [](U a, U b) { return a.alu(Ops::FDIV, b); }),
        }));
  return pm;
}

const PatternMatcher& get_simplifying_rewrite_patterns(const std::vector<Ops>& ops) {
  static std::mutex mu;
  static std::map<OpsKey, std::unique_ptr<PatternMatcher>> cache;
  std::lock_guard<std::mutex> lk(mu);
  auto& slot = cache[ops];
  if (!slot) slot = std::make_unique<PatternMatcher>(make_simplifying(ops));
  return *slot;
}

const PatternMatcher& get_late_rewrite_patterns(const std::vector<Ops>& ops, bool disable_fast_idiv) {
  static std::mutex mu;
  static std::map<std::pair<OpsKey, bool>, std::unique_ptr<PatternMatcher>> cache;
  std::lock_guard<std::mutex> lk(mu);
  auto& slot = cache[{ops, disable_fast_idiv}];
  if (!slot) slot = std::make_unique<PatternMatcher>(make_late(ops, disable_fast_idiv));
  return *slot;
}

}  // namespace tg
