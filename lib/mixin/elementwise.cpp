// Port of tinygrad/mixin/elementwise.py: broadcasting with type promotion, arithmetic, comparisons, bitwise ops, where,
// pow and the math/activation functions. Every expression follows the reference's operand order and python literal
// kinds (1 vs 1.0), since both are part of the graph: `2.0 * x` is x.mul(2.0, reverse=true) and builds MUL(2.0, x).
#include <cmath>

#include "lib/helpers.h"
#include "lib/uop/uop.h"

namespace tg {

namespace {
const double kPi = 3.141592653589793;  // math.pi
// helpers.polyN: functools.reduce(lambda acc, c: acc*x+c, p, 0.0)
UOp polyN(const UOp& x, std::initializer_list<double> p) {
  UOp acc;
  for (double c : p) acc = (acc ? acc.mul(x) : x.mul(0.0, true)).add(c);
  return acc;
}
}  // namespace

// the concrete dtypes whose least upper dtype with themselves is themselves (every one in the lattice): when both
// operands have one of them, promote below leaves them as they are
static bool promotes_to_itself(DType d) {
  static const std::vector<bool> table = [] {
    std::vector<bool> t(dtypes::every().size(), false);
    for (DType x : dtypes::every())
      if (!contains(dtypes::weaks, x) && x != dtypes::void_ && x != dtypes::uint128 && x != dtypes::uint256)
        t[(size_t)x.id()] = least_upper_dtype({x, x}) == x;
    return t;
  }();
  return (size_t)d.id() < table.size() && table[(size_t)d.id()];
}

std::pair<UOp, UOp> UOp::broadcasted(const Operand& y0, bool reverse) const {
  UOp yy = ufix(y0);
  const UOp& x = reverse ? yy : *this;
  const UOp& y = reverse ? *this : yy;
  if (x.dtype() == y.dtype() && promotes_to_itself(x.dtype())) return {x, y};
  DType out = least_upper_dtype({x.dtype(), y.dtype()});
  auto promote = [&](const UOp& t) -> UOp {
    UOp b = t.base();
    if (b.is_invalid()) return t;  // invalid bool is a weak const
    if (contains(dtypes::weaks, t.dtype()) && b.op() == Ops::CONST) return t.const_like(b.val(), weak_dtype(out));
    return t.cast(out);
  };
  return {promote(x), promote(y)};
}
UOp UOp::binop(Ops op, const Operand& x, bool reverse) const {
  auto [a, b] = broadcasted(x, reverse);
  return a.alu(op, b);
}

UOp UOp::usum(std::span<const UOp> more) const {
  bool is_bool = dtype() == dtypes::bool_;
  UOp acc = *this;
  for (const UOp& u : more) acc = is_bool ? acc.bitwise_or(u) : acc.add(u);
  return acc;
}
UOp UOp::uprod(std::span<const UOp> more) const {
  bool is_bool = dtype() == dtypes::bool_;
  UOp acc = *this;
  for (const UOp& u : more) acc = is_bool ? acc.bitwise_and(u) : acc.mul(u);
  return acc;
}
UOp UOp::usum_of(std::span<const UOp> all) {
  if (all.empty()) throw Error("usum of an empty list");
  return all[0].usum(all.subspan(1));
}
UOp UOp::uprod_of(std::span<const UOp> all) {
  if (all.empty()) throw Error("uprod of an empty list");
  return all[0].uprod(all.subspan(1));
}

UOp UOp::detach() const { return alu(Ops::DETACH); }
UOp UOp::logical_not() const { return cast(dtypes::bool_).ne(true); }
UOp UOp::contiguous() const {
  if (contains(dtypes::weaks, dtype())) return *this;
  if (op() == Ops::CONTIGUOUS || device().is_none() || has_buffer_identity()) return *this;
  return alu(Ops::CONTIGUOUS);
}
UOp UOp::contiguous_backward() const { return alu(Ops::CONTIGUOUS_BACKWARD); }
UOp UOp::neg() const { return dtype() == dtypes::bool_ ? logical_not() : mul(-1); }
UOp UOp::add(const Operand& x, bool reverse) const { return binop(Ops::ADD, x, reverse); }
UOp UOp::sub(const Operand& x, bool reverse) const {
  // alu, not +: _broadcasted already promoted these (only a bare weak CONST is kept weak)
  auto [a, b] = broadcasted(x, reverse);
  return a.alu(Ops::ADD, b.neg());
}
UOp UOp::mul(const Operand& x, bool reverse) const { return binop(Ops::MUL, x, reverse); }
UOp UOp::bitwise_not() const {
  if (dtype() == dtypes::bool_) return logical_not();
  return dtypes::is_unsigned(dtype()) ? bitwise_xor(dtype().max()) : bitwise_xor(-1);
}
UOp UOp::bitwise_and(const Operand& x, bool reverse) const { return binop(Ops::AND, x, reverse); }
UOp UOp::bitwise_or(const Operand& x, bool reverse) const { return binop(Ops::OR, x, reverse); }
UOp UOp::bitwise_xor(const Operand& x, bool reverse) const { return binop(Ops::XOR, x, reverse); }
UOp UOp::mod(const Operand& x, bool reverse) const {
  auto [a, b] = broadcasted(x, reverse);
  if (dtypes::is_int(a.dtype()) && dtypes::is_int(b.dtype())) return a.alu(Ops::FLOORMOD, b);
  return a.sub(a.div(b, false, "floor").mul(b));
}
UOp UOp::fmod(const Operand& x) const {
  auto [a, b] = broadcasted(x);
  if (dtypes::is_int(a.dtype()) && dtypes::is_int(b.dtype())) return a.alu(Ops::CMOD, b);
  return a.sub(a.div(b, false, "trunc").mul(b));
}
UOp UOp::div(const Operand& x, bool reverse, std::string_view rounding_mode) const {
  bool none = rounding_mode.empty(), trunc_ = rounding_mode == "trunc", floor_ = rounding_mode == "floor";
  auto [a, b] = broadcasted(x, reverse);
  if (dtypes::is_int(a.dtype()) && dtypes::is_int(b.dtype())) {
    if (trunc_) return a.alu(Ops::CDIV, b);
    if (floor_) return a.alu(Ops::FLOORDIV, b);
  }
  if (dtypes::is_int(a.dtype()) || a.dtype() == dtypes::bool_) a = a.cast(dtypes::default_float());
  // alu, not *: _broadcasted already promoted these (only a bare weak CONST is kept weak)
  UOp d = a.alu(Ops::MUL, b.reciprocal());
  if (none) return d;
  if (trunc_) return d.trunc();
  if (floor_) return d.floor();
  throw Error("div: rounding_mode='" + std::string(rounding_mode) + "' is not supported");
}
UOp UOp::floordiv(const Operand& x, bool reverse) const { return div(x, reverse, "floor"); }
UOp UOp::lt(const Operand& x) const { return binop(Ops::CMPLT, x, false); }
UOp UOp::gt(const Operand& x) const { return binop(Ops::CMPLT, x, true); }
UOp UOp::ge(const Operand& x) const { return lt(x).logical_not(); }
UOp UOp::le(const Operand& x) const { return gt(x).logical_not(); }
UOp UOp::ne(const Operand& x) const { return binop(Ops::CMPNE, x, false); }
UOp UOp::eq(const Operand& x) const { return ne(x).logical_not(); }
UOp UOp::lshift(const Operand& x, bool reverse) const { return binop(Ops::SHL, x, reverse); }
UOp UOp::rshift(const Operand& x, bool reverse) const { return binop(Ops::SHR, x, reverse); }
UOp UOp::maximum(const Operand& x) const { return binop(Ops::MAX, x, false); }
UOp UOp::inverse_() const { return is_floating_point() ? neg() : bitwise_not(); }
UOp UOp::minimum(const Operand& x) const {
  auto [t, y] = broadcasted(x);
  // the int inverse is done in python, since const has weak dtype without width
  DType dt = least_upper_dtype({t.dtype(), y.dtype()});
  if (dtypes::is_float(dt)) return t.neg().alu(Ops::MAX, y.neg()).neg();
  PyConst k = dt.const_(py_add(dt.min(), dt.max()));
  return t.bitwise_xor(k).alu(Ops::MAX, y.bitwise_xor(k)).bitwise_xor(k);
}
UOp UOp::copysign(const Operand& other) const {
  auto [a, b] = broadcasted(other);
  UOp mag = a.abs();
  return b.lt(0).bitwise_or(b.reciprocal().lt(0)).where(mag.neg(), mag);
}
UOp UOp::logaddexp(const Operand& other) const {
  auto [a, b] = broadcasted(other);
  UOp m = a.maximum(b);
  return a.sub(m).exp().add(b.sub(m).exp()).log().add(m);
}
UOp UOp::where(const Operand& x, const Operand& y) const {
  // ref.ufix(x)._broadcasted(y): for UOps ufix does not depend on ref
  auto [a, b] = ufix(x).broadcasted(y);
  return alu(Ops::WHERE, a, b);
}
UOp UOp::masked_fill(const UOp& mask, const Operand& value) const { return mask.where(value, *this); }
UOp UOp::threefry(const UOp& seed) const { return alu(Ops::THREEFRY, seed); }
UOp UOp::reciprocal() const { return alu(Ops::RECIPROCAL); }
UOp UOp::trunc() const { return alu(Ops::TRUNC); }
UOp UOp::sqrt() const { return alu(Ops::SQRT); }
UOp UOp::sin() const { return alu(Ops::SIN); }
UOp UOp::cos() const {
  UOp s = cast(least_upper_float(dtype()));
  return s.cast(least_upper_dtype({s.dtype(), dtypes::float32})).sub(kPi / 2, true).sin().cast(s.dtype());
}
UOp UOp::exp() const {
  UOp s = cast(least_upper_float(dtype()));
  return s.cast(least_upper_dtype({s.dtype(), dtypes::float32})).mul(1 / std::log(2.0)).exp2().cast(s.dtype());
}
UOp UOp::log2() const { return alu(Ops::LOG2); }
UOp UOp::exp2() const { return alu(Ops::EXP2); }
UOp UOp::pow(const Operand& x, bool reverse) const {
  auto [base_, exponent] = broadcasted(x, reverse);
  // TODO (reference): int pow
  if (!dtypes::is_float(least_upper_dtype({base_.dtype(), exponent.dtype()})) && !x.is_uop()) {
    const PyConst& v = x.value();
    bool nonneg_int = (v.is_int() && v.i >= 0) || v.is_bool();
    if (!nonneg_int) throw Error("pow: base needs to be float, got " + base_.dtype().repr() + " ** " + v.repr());
  }
  return base_.alu(Ops::POW, exponent);
}
UOp UOp::square() const { return mul(*this); }
UOp UOp::clamp(const std::optional<Operand>& min_, const std::optional<Operand>& max_) const {
  if (!min_ && !max_) throw Error("clamp: at least one of 'min_' or 'max_' must not be None");
  UOp ret = min_ ? lt(*min_).where(*min_, *this) : *this;
  return max_ ? ret.gt(*max_).where(*max_, ret) : ret;
}
UOp UOp::clip(const std::optional<Operand>& min_, const std::optional<Operand>& max_) const {
  return clamp(min_, max_);
}
UOp UOp::isnan() const { return ne(*this); }
UOp UOp::isinf(bool detect_positive, bool detect_negative) const {
  return eq(INFINITY).mul(detect_positive).add(eq(-INFINITY).mul(detect_negative));
}
UOp UOp::isfinite() const { return isinf().bitwise_or(isnan()).logical_not(); }
UOp UOp::isclose(const Operand& other0, double rtol, double atol, bool equal_nan) const {
  UOp other = ufix(other0);
  UOp is_finite_close = isfinite()
                            .bitwise_and(other.isfinite())
                            .bitwise_and(sub(other).abs().le(other.abs().mul(rtol, true).add(atol, true)));
  UOp is_infinite_close = isinf().bitwise_or(other.isinf()).bitwise_and(eq(other));
  UOp is_nan_close = isnan().bitwise_and(other.isnan()).bitwise_and(equal_nan);
  return is_finite_close.bitwise_or(is_infinite_close).bitwise_or(is_nan_close);
}
UOp UOp::ceil() const {
  UOp b = trunc();
  return gt(b).where(b.add(1), b);
}
UOp UOp::floor() const {
  UOp b = trunc();
  return lt(b).where(b.sub(1), b);
}
UOp UOp::relu() const { return gt(0).where(*this, 0); }
UOp UOp::sigmoid() const { return mul(-1 / std::log(2.0)).exp2().add(1, true).reciprocal(); }
UOp UOp::relu6() const { return relu().sub(sub(6).relu()); }
UOp UOp::hardswish() const { return mul(add(3).relu6()).mul(1.0 / 6); }
UOp UOp::hardsigmoid(double alpha, double beta) const {
  return mul(alpha, true).add(beta).relu().sub(mul(alpha, true).add(beta).sub(1).relu());
}
UOp UOp::hardtanh(PyConst min_val, PyConst max_val) const { return clip(Operand(min_val), Operand(max_val)); }
UOp UOp::leaky_relu(double neg_slope) const { return lt(0).where(mul(neg_slope, true), *this); }
UOp UOp::tanh() const { return mul(2.0, true).sigmoid().mul(2.0, true).sub(1.0); }
UOp UOp::quick_gelu() const { return mul(mul(1.702).sigmoid()); }
UOp UOp::gelu(std::string_view approximate) const {
  if (approximate == "tanh")
    return mul(0.5, true).mul(add(pow(3).mul(0.044715, true)).mul(std::sqrt(2 / kPi), true).tanh().add(1, true));
  if (approximate == "none") return mul(0.5).mul(div(std::sqrt(2.0)).erf().add(1.0, true));
  throw Error("gelu: approximate='" + std::string(approximate) + "' is not supported");
}
UOp UOp::swish() const { return mul(sigmoid()); }
UOp UOp::silu() const { return swish(); }
UOp UOp::rsqrt() const { return sqrt().reciprocal(); }
UOp UOp::log() const { return log2().mul(std::log(2.0)); }
UOp UOp::log10() const { return log2().mul(std::log10(2.0)); }
UOp UOp::atanh() const { return add(1, true).div(sub(1, true)).log().div(2); }
UOp UOp::asinh() const { return add(square().add(1).sqrt()).log(); }
UOp UOp::acosh() const { return add(square().sub(1).sqrt()).log(); }
UOp UOp::round() const {
  UOp b = trunc().div(2.0);
  return gt(0).eq(b.trunc().eq(b)).where(sub(0.5).ceil(), add(0.5).floor());
}
UOp UOp::sign() const { return ne(0).where(lt(0).where(const_like(-1), const_like(1)), const_like(0)); }
UOp UOp::abs() const { return mul(sign()); }
UOp UOp::tan() const { return sin().div(cos()); }
UOp UOp::asin() const {
  // https://personal.math.ubc.ca/~cbm/aands/page_81.htm 4.4.46
  UOp x = abs().sub(1.0, true).sqrt().mul(polyN(abs(), {-0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810,
                                                        -0.0501743046, 0.0889789874, -0.2145988016, 1.5707963050}));
  return sign().mul(x.sub(kPi / 2, true));
}
UOp UOp::acos() const { return asin().sub(kPi / 2, true); }
UOp UOp::atan() const { return div(mul(*this).add(1, true).sqrt()).asin(); }
UOp UOp::elu(double alpha) const { return relu().sub(exp().sub(1, true).relu().mul(alpha, true)); }
UOp UOp::celu(double alpha) const { return maximum(0).add(div(alpha).exp().sub(1).mul(alpha, true).minimum(0)); }
UOp UOp::selu(double alpha, double gamma) const {
  return ge(0).where(*this, exp().sub(1).mul(alpha, true)).mul(gamma, true);
}
UOp UOp::softplus(double beta) const { return mul(beta).logaddexp(0.0).mul(1 / beta, true); }
UOp UOp::mish() const { return mul(softplus().tanh()); }
UOp UOp::logsigmoid() const { return neg().softplus().neg(); }
UOp UOp::sinh() const { return exp().sub(neg().exp()).div(2); }
UOp UOp::cosh() const { return exp().add(neg().exp()).div(2); }
UOp UOp::erf() const {
  // https://personal.math.ubc.ca/~cbm/aands/page_299.htm 7.1.26
  UOp t = abs().mul(0.3275911, true).add(1.0, true).div(1.0, true);
  UOp p = polyN(t, {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592});
  return sign().mul(t.mul(p).mul(square().neg().exp()).sub(1.0, true));
}
UOp UOp::softsign() const { return div(abs().add(1, true)); }
UOp UOp::lerp(const UOp& end, const Operand& weight) const {
  if (dtype() == dtypes::uint8 && weight.is_uop()) {
    const int W_PREC = 7;
    UOp w_i = weight.uop().mul(1 << W_PREC).add(0.5).cast(dtypes::int16);
    return add(end.sub(*this).cast(dtypes::int8).mul(w_i).add(1 << (W_PREC - 1)).cast(dtypes::uint16).rshift(W_PREC))
        .cast(dtypes::uint8);
  }
  return add(end.sub(*this).mul(weight));
}

// ************************* operators *************************

UOp operator+(const UOp& a, const UOp& b) { return a.add(b); }
UOp operator-(const UOp& a, const UOp& b) { return a.sub(b); }
UOp operator*(const UOp& a, const UOp& b) { return a.mul(b); }
UOp operator/(const UOp& a, const UOp& b) { return a.div(b); }
UOp operator%(const UOp& a, const UOp& b) { return a.mod(b); }
UOp operator&(const UOp& a, const UOp& b) { return a.bitwise_and(b); }
UOp operator|(const UOp& a, const UOp& b) { return a.bitwise_or(b); }
UOp operator^(const UOp& a, const UOp& b) { return a.bitwise_xor(b); }
UOp operator<<(const UOp& a, const UOp& b) { return a.lshift(b); }
UOp operator>>(const UOp& a, const UOp& b) { return a.rshift(b); }
UOp operator<(const UOp& a, const UOp& b) { return a.lt(b); }
UOp operator>(const UOp& a, const UOp& b) { return a.gt(b); }
UOp operator<=(const UOp& a, const UOp& b) { return a.le(b); }
UOp operator>=(const UOp& a, const UOp& b) { return a.ge(b); }
UOp operator-(const UOp& a) { return a.neg(); }
UOp operator~(const UOp& a) { return a.bitwise_not(); }

}  // namespace tg
