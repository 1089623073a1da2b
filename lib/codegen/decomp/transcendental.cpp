#include "lib/codegen/decomp/transcendental.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

namespace tg {

static const DTypes& transcendental_dtypes() {
  static const DTypes d{dtypes::float16, dtypes::float32, dtypes::float64};
  return d;
}
static const double kInf = std::numeric_limits<double>::infinity();
static const double kNan = std::numeric_limits<double>::quiet_NaN();
static const double kPi = 3.141592653589793;

static PyConst F(double v) { return PyConst(v); }
static PyConst I(pyint v) { return PyConst(v); }

std::pair<int, int> finfo(DType d) {
  if (d == dtypes::float16) return {5, 10};
  if (d == dtypes::bfloat16) return {8, 7};
  if (d == dtypes::float32) return {8, 23};
  if (d == dtypes::float64) return {11, 52};
  if (d == dtypes::fp8e4m3 || d == dtypes::fp8e4m3fnuz) return {4, 3};
  if (d == dtypes::fp8e5m2 || d == dtypes::fp8e5m2fnuz) return {5, 2};
  throw Error(d.repr() + " is not a floating point type");
}
static bool is_fnuz(DType d) { return d == dtypes::fp8e4m3fnuz || d == dtypes::fp8e5m2fnuz; }
int mantissa_bits(DType d) { return finfo(d).second; }
int exponent_bias(DType d) { return (1 << (finfo(d).first - 1)) - (is_fnuz(d) ? 0 : 1); }
int exponent_mask(DType d) { return (1 << finfo(d).first) - 1; }

UOp shl(const UOp& x, int y) { return x.mul(I((pyint)1 << y)); }
UOp shr(const UOp& x, int y) { return x.floordiv(I((pyint)1 << y)); }

UOp polyN(const UOp& x, const std::vector<double>& p) {
  // functools.reduce(lambda acc,c: acc*x+c, p, 0.0): the first acc*x is the float 0.0 times x (x.__rmul__)
  UOp acc;
  for (double c : p) acc = (acc ? acc * x : x.mul(F(0.0), true)).add(F(c));
  return acc;
}

static DType int_of(DType d) {
  if (d == dtypes::float64) return dtypes::int64;
  if (d == dtypes::float32) return dtypes::int32;
  if (d == dtypes::float16) return dtypes::int16;
  throw Error("KeyError: " + d.repr());
}
static DType uint_of(DType d) {
  if (d == dtypes::float64) return dtypes::uint64;
  if (d == dtypes::float32) return dtypes::uint32;
  if (d == dtypes::float16) return dtypes::uint16;
  throw Error("KeyError: " + d.repr());
}

// replace inf -> inf, -inf -> _inf, nan -> nan, otherwise -> ratio
static UOp lazy_map_numbers(const UOp& x, const UOp& inf, const UOp& _inf, const UOp& nan, const UOp& ratio) {
  return x.ne(F(kInf)).where(x.ne(x).where(nan, x.ne(F(-kInf)).where(ratio, _inf)), inf);
}

UOp rintk(const UOp& d) {
  // round d:float to int away from 0
  DType out = int_of(d.dtype());
  return (d + d.lt(F(0.0)).where(d.const_like(F(-0.5)), d.const_like(F(0.5)))).cast(out);
}

UOp pow2if(const UOp& q, DType float_dtype) {
  // cast(2^q, float_dtype) where q is any integer in the range of [-126, 127]
  DType out;
  if (q.dtype() == dtypes::int64)
    out = dtypes::float64;
  else if (q.dtype() == dtypes::int32)
    out = dtypes::float32;
  else if (q.dtype() == dtypes::int16)
    out = float_dtype;
  else
    throw Error("KeyError: " + q.dtype().repr());
  return shl(q.add(I(exponent_bias(out))), mantissa_bits(out)).bitcast(out);
}

UOp ilogb2k(const UOp& d) {
  // the integer part of log2(d), where d is normalized fp value in the range of [0, +inf)
  UOp dint = d.bitcast(int_of(d.dtype()));
  // -1 <= ilog2bk(d) <= 128
  return shr(dint, mantissa_bits(d.dtype())).bitwise_and(I(exponent_mask(d.dtype()))).sub(I(exponent_bias(d.dtype())));
}

UOp ldexp3k(const UOp& d, const UOp& e) {
  // d*2^e. e is a number obtained by casting an integer in the range [-127, 127] to a float. d is any float number.
  DType dt = int_of(d.dtype());
  UOp m1 = d.bitcast(dt);
  UOp m2 = shl(e.cast(dt), mantissa_bits(d.dtype()));
  return (m1 + m2).bitcast(d.dtype());
}

UOp ldexp2k(const UOp& d, const UOp& e) {
  // d*2^e. much faster than ldexp3k but risky. d > 0 and d is not denormal.
  return (d * pow2if(shr(e, 1), d.dtype())) * pow2if(e - shr(e, 1), d.dtype());
}

std::pair<UOp, UOp> frexp(const UOp& v) {
  // frexp(v) -> (mantissa, exponent) assuming v != 0
  DType dt = v.dtype();
  pyint m1 = dt == dtypes::float64   ? (pyint)0x000FFFFFFFFFFFFF
             : dt == dtypes::float32 ? (pyint)0x807FFFFF
                                     : (pyint)0x83FF;
  pyint m2 = dt == dtypes::float64   ? (pyint)0x3FE0000000000000
             : dt == dtypes::float32 ? (pyint)0x3F000000
                                     : (pyint)0x3800;
  UOp bits = v.bitcast(uint_of(dt));
  UOp exponent = shr(bits, mantissa_bits(dt)).bitwise_and(I(exponent_mask(dt)));
  // Set the exponent bits appropriately to normalize the mantissa into the range of [0.5, 1.0).
  UOp mantissa = bits.bitwise_and(I(m1)).bitwise_or(I(m2)).bitcast(dt);
  UOp exp = exponent.sub(I(exponent_bias(dt))).add(I(1));
  return {mantissa, exp};
}

// *** reduction algorithms for sine ***
std::pair<UOp, UOp> payne_hanek_reduction(const UOp& d) {
  // 190 bits of 2/pi for Payne-Hanek style argument reduction
  static const pyint two_over_pi_f[] = {0x00000000, 0x28be60db, 0x9391054a, 0x7f09d5f4,
                                        0x7d4d3770, 0x36d8a566, 0x4f10e410};
  const int n_tbl = 7;
  DType inter = d.dtype() == dtypes::float16 ? dtypes::float32 : d.dtype();
  auto [f, e0] = frexp(d);
  UOp ia = (f.cast(inter) * F(4.294967296e9)).cast(dtypes::uint64);
  // extract 96 relevant bits of 2/pi based on magnitude of argument
  UOp i = shr(e0.cast(dtypes::uint64), 5);
  UOp e = e0.cast(dtypes::int32).bitwise_and(I(31));
  UOp offset = e.sub(I(32), true);
  // an = two_over_pi_f[i+offset]
  std::function<UOp(const UOp&, int, int)> take = [&](const UOp& an, int off, int count) -> UOp {
    if (count + off < n_tbl - 1)
      return i.ne(I(count)).where(take(an, off, count + 1), an.const_like(I(two_over_pi_f[count + off])));
    return an;
  };
  auto shl_lazy = [&](U x, U y) {
    return (x.cast(dtypes::uint64) * pow2if(y, d.dtype()).cast(dtypes::uint64)).cast(dtypes::uint32);
  };
  auto shr_lazy = [&](U x, U y) {
    return x.cast(dtypes::uint64).floordiv(pow2if(y, d.dtype()).cast(dtypes::uint64)).cast(dtypes::uint32);
  };
  std::vector<UOp> a;
  for (int k = 0; k < 4; k++) a.push_back(take(UOp::const_(I(0), dtypes::uint32), k, 0));
  // (two_over_pi_f[Int(i) + n] << e) | (two_over_pi_f[Int(i) + n+1] >> (nbits - e))
  UOp hi = shl_lazy(a[0], e).bitwise_or(shr_lazy(a[1], offset));
  UOp mi = shl_lazy(a[1], e).bitwise_or(shr_lazy(a[2], offset));
  UOp lo = shl_lazy(a[2], e).bitwise_or(shr_lazy(a[3], offset));
  auto hp_mul = [](U x, U y) { return x.cast(dtypes::uint64) * y.cast(dtypes::uint64); };
  // compute x * 2/pi
  UOp p = shl(hp_mul(ia, hi), 32) + hp_mul(ia, mi) + shr(hp_mul(ia, lo), 32);
  // round quotient to nearest
  UOp q = shr(p, 62).cast(dtypes::int32);
  p = p.bitwise_and(I((pyint)0x3fffffffffffffff));
  UOp r = (p.cast(inter) * F(3.4061215800865545e-19)).cast(d.dtype());
  // if fraction >= 0.5, r -= pi/2, q += 1
  return {f.lt(F(0.5)).where(r, r.sub(F(kPi / 2))), f.lt(F(0.5)).where(q, q.add(I(1)))};
}

std::pair<UOp, UOp> cody_waite_reduction(const UOp& d) {
  const double m_1_pi = 0.318309886183790671537767526745028724;
  UOp qdh = (d * F(m_1_pi / 16777216.0)).cast(dtypes::int64).cast(d.dtype()) * F(16777216.0);
  std::function<UOp(const UOp&, const UOp&)> reduce_d = [&](U x, U q) -> UOp {
    if (x.dtype() == dtypes::float64) {
      const double PI_A = 3.1415926218032836914, PI_B = 3.1786509424591713469e-08, PI_C = 1.2246467864107188502e-16,
                   PI_D = 1.2736634327021899816e-24;
      UOp r = qdh * F(-PI_A) + x;
      r = q * F(-PI_A) + r;
      r = qdh * F(-PI_B) + r;
      r = q * F(-PI_B) + r;
      r = qdh * F(-PI_C) + r;
      r = q * F(-PI_C) + r;
      r = (qdh + q) * F(-PI_D) + r;
      return r;
    }
    if (x.dtype() == dtypes::float16)
      return reduce_d(x.cast(dtypes::float32), q.cast(dtypes::float32)).cast(dtypes::float16);
    UOp r = q * F(-3.1414794921875) + x;
    r = q * F(-0.00011315941810607910156) + r;
    r = q * F(-1.9841872589410058936e-09) + r;
    r = q * F(-1.2154201256553420762e-10) + r;
    return r;
  };
  UOp quadrant = d.dtype() == dtypes::float64 ? rintk(d * F(m_1_pi) - qdh) : rintk(d * F(m_1_pi));
  return {reduce_d(d, quadrant.cast(d.dtype())), quadrant.cast(dtypes::int32)};
}

// *** approximate sine on small angle ***
static UOp trig_poly(const UOp& d, const std::vector<double>& c32, const std::vector<double>& c64) {
  return d * polyN(d * d, d.dtype() == dtypes::float64 ? c64 : c32);
}
// approximate sine on [-pi/2, pi/2]
static UOp sin_poly(const UOp& d) {
  return trig_poly(d,
                   {2.6083159809786593541503e-06, -0.0001981069071916863322258, 0.00833307858556509017944336,
                    -0.166666597127914428710938, 1.0},
                   {-7.97255955009037868891952e-18, 2.81009972710863200091251e-15, -7.64712219118158833288484e-13,
                    1.60590430605664501629054e-10, -2.50521083763502045810755e-08, 2.75573192239198747630416e-06,
                    -0.000198412698412696162806809, 0.00833333333333332974823815, -0.166666666666666657414808, 1.0});
}
static UOp ifand(const UOp& q, int n) { return q.bitwise_and(I(n)).ne(I(0)); }
static UOp sin_poly_small(const UOp& d, const UOp& q) {
  UOp r = sin_poly(d);
  return r * ifand(q, 1).where(r.const_like(I(-1)), r.const_like(I(1)));
}
static UOp sin_poly_large(const UOp& d, const UOp& q) {
  UOp r = sin_poly(d + ifand(q, 1).where(d.const_like(F(kPi / 2)), d.const_like(I(0))));
  return r * ifand(q, 2).where(r.const_like(I(-1)), r.const_like(I(1)));
}

// *** toplevel functions for xsin/xlog2/xexp2 ***

UOp xsin(const UOp& d, bool fast, double switch_over) {
  if (!contains(transcendental_dtypes(), d.dtype())) throw Error("xsin of " + d.dtype().repr());
  // mask +-inf/nan as zero
  UOp x = lazy_map_numbers(d, d.const_like(F(0.0)), d.const_like(F(0.0)), d.const_like(F(0.0)), d);
  // x_sign = sign(x)
  UOp x_sign = x.ne(I(0)).where(x.lt(I(0)).where(x.const_like(I(-1)), x.const_like(I(1))), x.const_like(I(0)));
  UOp x_abs = x * x_sign;
  auto [r, q] = fast ? cody_waite_reduction(x_abs) : payne_hanek_reduction(x_abs);
  UOp result;
  if (fast)
    result = sin_poly_small(r, q);
  else {
    // Payne Hanek Reduction assumes abs(x) >= pi/4, so for smaller values, use cody_waite_reduction.
    auto [r_small, q_small] = cody_waite_reduction(x_abs);
    result = x_abs.lt(F(switch_over)).where(sin_poly_small(r_small, q_small), sin_poly_large(r, q));
  }
  // adjusts the sign for abs(x)
  result = result * x_sign;
  // sin(Inf) = NaN, sin(-Inf) = NaN, sin(NaN) = NaN
  return lazy_map_numbers(d, d.const_like(F(kNan)), d.const_like(F(kNan)), d.const_like(F(kNan)), result);
}

UOp xexp2(const UOp& d) {
  if (!contains(transcendental_dtypes(), d.dtype())) throw Error("xexp2 of " + d.dtype().repr());
  // mask +=inf/nan as zero.
  UOp x = lazy_map_numbers(d, d.const_like(F(0.0)), d.const_like(F(0.0)), d.const_like(F(0.0)), d);
  UOp q = rintk(x);
  // s = d - round(d)
  UOp s = x - q;
  // a polynomial approximation with 13 non-zero terms in the range of [-(log 2)/2,(log 2)/2].
  UOp u;
  if (d.dtype() == dtypes::float64)
    u = polyN(s,
              {0.4434359082926529454e-9, 0.7073164598085707425e-8, 0.1017819260921760451e-6, 0.1321543872511327615e-5,
               0.1525273353517584730e-4, 0.1540353045101147808e-3, 0.1333355814670499073e-2, 0.9618129107597600536e-2,
               0.5550410866482046596e-1, 0.2402265069591012214e+0, 0.6931471805599452862e+0, 0.1000000000000000000e+1});
  else
    u = polyN(
        s, {0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1, 0.2402264476e+0, 0.6931471825e+0, 1.0});
  u = ldexp2k(u, q);  // u*2^q
  pyint upper = d.dtype() == dtypes::float64 ? 1024 : d.dtype() == dtypes::float32 ? 128 : 23;
  pyint lower = d.dtype() == dtypes::float64 ? -2000 : d.dtype() == dtypes::float32 ? -150 : -22;
  // Replace x >= upper with +inf
  u = d.ge(I(upper)).where(d.const_like(F(kInf)), u);
  // Replace x < lower with zero.
  u = d.lt(I(lower)).where(d.const_like(F(0.0)), u);
  // exp2(NaN) = NaN
  return d.ne(d).where(d.const_like(F(kNan)), u);
}

UOp xlog2(const UOp& d) {
  if (!contains(transcendental_dtypes(), d.dtype())) throw Error("xlog2 of " + d.dtype().repr());
  // float16 uses 2^10 for denormal scaling (2^64 overflows), float32/64 use 2^64
  int denormal_exp = d.dtype() == dtypes::float16 ? 10 : 64;
  UOp FLT_MIN = d.const_like(F(d.dtype() == dtypes::float16 ? 6.1e-5 : 1e-4));
  UOp is_denormal = d < FLT_MIN;
  UOp a = is_denormal.where(d * F(std::ldexp(1.0, denormal_exp)), d);

  UOp e = ilogb2k(a * F(1.0 / 0.75)).cast(a.dtype());
  UOp m = ldexp3k(a, -e);
  e = is_denormal.where(e.sub(I(denormal_exp)), e);

  UOp x = m.sub(F(1.0)) / m.add(F(1.0));
  UOp x2 = x * x;
  UOp r;
  if (d.dtype() == dtypes::float64) {
    UOp t = polyN(
        x2, {0.2211941750456081490e+0, 0.2200768693152277689e+0, 0.2623708057488514656e+0, 0.3205977477944495502e+0,
             0.4121985945485324709e+0, 0.5770780162997058982e+0, 0.96179669392608091449});
    r = t * (x * x2) + e + x * F(2.885390081777926774);
  } else {
    UOp t = polyN(x2, {0.4374550283e+0, 0.5764790177e+0, 0.9618012905120});
    // s_lo term (x*3.27e-08) only for float32 - underflows in float16
    UOp base = t * (x * x2) + e + x * F(2.8853900432586669922);
    r = d.dtype() == dtypes::float32 ? base + x * F(3.2734474483568488616e-08) : base.add(I(0));
  }
  // log2(Inf) = Inf
  r = d.ne(F(kInf)).where(r, r.const_like(F(kInf)));
  // log2(0) = -Inf (handle both +0.0 and -0.0)
  r = d.ne(F(0.0)).where(r, r.const_like(F(-kInf)));
  // log2(x) = NaN for x < 0
  r = d.lt(F(-0.0)).where(r.const_like(F(kNan)), r);
  // log2(NaN) = NaN
  r = d.ne(d).where(r.const_like(F(kNan)), r);
  // log2(-0.0) = -Inf. In certain devices like PTX, x == -0.0 won't be true. so making reciprocal.
  return d.reciprocal().ne(F(-kInf)).where(r, r.const_like(F(-kInf)));
}

UOp xpow(const UOp& base, const UOp& exponent) {
  // start with b ** e = exp2(e * log2(b))
  UOp ret = base.lt(I(0)).where(-base, base).log2().mul(exponent).exp2();
  // negative base: nan for non-integer exponent, negate for odd integer exponent. -inf is never nan
  UOp non_int = exponent.ne(exponent.cast(dtypes::int32).cast(exponent.dtype()));
  UOp is_odd = exponent.lt(I(0)).where(-exponent, exponent).cast(dtypes::int32).mod(I(2)).cast(dtypes::bool_);
  UOp neg_base = non_int.where(base.ne(F(-kInf)).where(ret.const_like(F(kNan)), ret), is_odd.where(-ret, ret));
  // x ** 0 = 1, including 0 ** 0 and inf ** 0
  return exponent.eq(I(0)).where(ret.const_like(I(1)), base.lt(I(0)).where(neg_base, ret));
}

static PatternMatcher make_transcendental_patterns(const std::vector<Ops>& ops, bool force) {
  auto has = [&](Ops o) { return std::find(ops.begin(), ops.end(), o) != ops.end(); };
  DTypes other;
  for (DType dt : dtypes::floats)
    if (!contains(transcendental_dtypes(), dt)) other.push_back(dt);
  PatternMatcher pm;
  if (!has(Ops::EXP2) || force) {
    pm = pm + PatternMatcher("get_transcendental_patterns",
                             {
                                 TG_RULE(UPat(Ops::EXP2).dtype(transcendental_dtypes()).src(UPat::var("d")),
                                         [](U d) { return xexp2(d); }),
                                 TG_RULE(UPat(Ops::EXP2).dtype(other).src(UPat::var("d")).named("x"),
                                         [](U x, U d) { return d.cast(dtypes::float32).alu(x.op()).cast(x.dtype()); }),
                             });
  }
  if (!has(Ops::LOG2) || force) {
    pm = pm + PatternMatcher("get_transcendental_patterns",
                             {
                                 TG_RULE(UPat(Ops::LOG2).dtype(transcendental_dtypes()).src(UPat::var("d")),
                                         [](U d) { return xlog2(d); }),
                                 TG_RULE(UPat(Ops::LOG2).dtype(other).src(UPat::var("d")).named("x"),
                                         [](U x, U d) { return d.cast(dtypes::float32).alu(x.op()).cast(x.dtype()); }),
                             });
  }
  if (!has(Ops::SIN) || force) {
    pm = pm + PatternMatcher("get_transcendental_patterns",
                             {
                                 TG_RULE(UPat(Ops::SIN).dtype(transcendental_dtypes()).src(UPat::var("d")),
                                         [](U d) { return xsin(d); }),
                                 TG_RULE(UPat(Ops::SIN).dtype(other).src(UPat::var("d")).named("x"),
                                         [](U x, U d) { return d.cast(dtypes::float32).alu(x.op()).cast(x.dtype()); }),
                             });
  }
  // rewrite SQRT to xpow 0.5
  if (!has(Ops::SQRT) || force) {
    pm = pm + PatternMatcher("get_transcendental_patterns", {
                                                                TG_RULE(UPat(Ops::SQRT).src_all(UPat::var("d")),
                                                                        [](U d) { return xpow(d, d.const_like(0.5)); }),
                                                            });
  }
  return pm;
}

const PatternMatcher& get_transcendental_patterns(const std::vector<Ops>& ops, bool force) {
  // functools.cache
  static std::mutex mu;
  static std::map<std::pair<std::vector<Ops>, bool>, std::unique_ptr<PatternMatcher>> cache;
  std::lock_guard<std::mutex> lk(mu);
  auto& slot = cache[{ops, force}];
  if (!slot) slot = std::make_unique<PatternMatcher>(make_transcendental_patterns(ops, force));
  return *slot;
}

}  // namespace tg
