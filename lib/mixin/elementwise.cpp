// Port of tinygrad/mixin/elementwise.py: broadcasting with type promotion, arithmetic, comparisons, bitwise ops, where,
// pow and the math/activation functions. Every expression follows the reference's operand order and python literal
// kinds (1 vs 1.0), since both are part of the graph: `2.0 * x` is x.mul(2.0, reverse=true) and builds MUL(2.0, x).
#include "lib/mixin/elementwise.h"

#include <cmath>
#include <optional>

#include "lib/helpers.h"
#include "lib/tensor.h"
#include "lib/uop/uop.h"

namespace tg {

namespace {
const double kPi = 3.141592653589793;  // math.pi
// helpers.polyN: functools.reduce(lambda acc, c: acc*x+c, p, 0.0)
template <class S>
S polyN(const S& x, std::initializer_list<double> p) {
  std::optional<S> acc;
  for (double c : p) acc = (acc ? acc->mul(x) : x.mul(0.0, true)).add(c);
  return *acc;
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

template <class S>
std::pair<S, S> ElementwiseMixin<S>::broadcasted(const operand_t<S>& y0, bool reverse) const {
  S yy = self().ufix(y0);
  const S& x = reverse ? yy : self();
  const S& y = reverse ? self() : yy;
  if (x.dtype() == y.dtype() && promotes_to_itself(x.dtype())) return {x, y};
  DType out = least_upper_dtype({x.dtype(), y.dtype()});
  auto promote = [&](const S& t) -> S {
    const UOp& b = t._uop().base();
    if (b.is_invalid()) return t;  // invalid bool is a weak const
    if (contains(dtypes::weaks, t.dtype()) && b.op() == Ops::CONST) return t.const_like(b.val(), weak_dtype(out));
    return t.cast(out);
  };
  return {promote(x), promote(y)};
}
template <class S>
S ElementwiseMixin<S>::binop(Ops op, const operand_t<S>& x, bool reverse) const {
  auto [a, b] = broadcasted(x, reverse);
  return a.alu(op, b);
}

template <class S>
S ElementwiseMixin<S>::usum(std::span<const S> more) const {
  bool is_bool = self().dtype() == dtypes::bool_;
  S acc = self();
  for (const S& u : more) acc = is_bool ? acc.bitwise_or(u) : acc.add(u);
  return acc;
}
template <class S>
S ElementwiseMixin<S>::uprod(std::span<const S> more) const {
  bool is_bool = self().dtype() == dtypes::bool_;
  S acc = self();
  for (const S& u : more) acc = is_bool ? acc.bitwise_and(u) : acc.mul(u);
  return acc;
}
template <class S>
S ElementwiseMixin<S>::usum_of(std::span<const S> all) {
  if (all.empty()) throw Error("usum of an empty list");
  return all[0].usum(all.subspan(1));
}
template <class S>
S ElementwiseMixin<S>::uprod_of(std::span<const S> all) {
  if (all.empty()) throw Error("uprod of an empty list");
  return all[0].uprod(all.subspan(1));
}

template <class S>
S ElementwiseMixin<S>::detach() const { return self().alu(Ops::DETACH); }
template <class S>
S ElementwiseMixin<S>::logical_not() const { return this->cast(dtypes::bool_).ne(true); }
template <class S>
S ElementwiseMixin<S>::contiguous() const {
  if (contains(dtypes::weaks, self().dtype())) return self();
  const UOp& u = self()._uop();
  if (u.op() == Ops::CONTIGUOUS || u.device().is_none() || u.has_buffer_identity()) return S::_wrap_uop(u);
  return self().alu(Ops::CONTIGUOUS);
}
template <class S>
S ElementwiseMixin<S>::contiguous_backward() const { return self().alu(Ops::CONTIGUOUS_BACKWARD); }
template <class S>
S ElementwiseMixin<S>::neg() const { return self().dtype() == dtypes::bool_ ? logical_not() : mul(-1); }
template <class S>
S ElementwiseMixin<S>::add(const operand_t<S>& x, bool reverse) const { return binop(Ops::ADD, x, reverse); }
template <class S>
S ElementwiseMixin<S>::sub(const operand_t<S>& x, bool reverse) const {
  // alu, not +: _broadcasted already promoted these (only a bare weak CONST is kept weak)
  auto [a, b] = broadcasted(x, reverse);
  return a.alu(Ops::ADD, b.neg());
}
template <class S>
S ElementwiseMixin<S>::mul(const operand_t<S>& x, bool reverse) const { return binop(Ops::MUL, x, reverse); }
template <class S>
S ElementwiseMixin<S>::bitwise_not() const {
  if (self().dtype() == dtypes::bool_) return logical_not();
  return dtypes::is_unsigned(self().dtype()) ? bitwise_xor(self().dtype().max()) : bitwise_xor(-1);
}
template <class S>
S ElementwiseMixin<S>::bitwise_and(const operand_t<S>& x, bool reverse) const { return binop(Ops::AND, x, reverse); }
template <class S>
S ElementwiseMixin<S>::bitwise_or(const operand_t<S>& x, bool reverse) const { return binop(Ops::OR, x, reverse); }
template <class S>
S ElementwiseMixin<S>::bitwise_xor(const operand_t<S>& x, bool reverse) const { return binop(Ops::XOR, x, reverse); }
template <class S>
S ElementwiseMixin<S>::mod(const operand_t<S>& x, bool reverse) const {
  auto [a, b] = broadcasted(x, reverse);
  if (dtypes::is_int(a.dtype()) && dtypes::is_int(b.dtype())) return a.alu(Ops::FLOORMOD, b);
  return a.sub(a.div(b, false, "floor").mul(b));
}
template <class S>
S ElementwiseMixin<S>::fmod(const operand_t<S>& x) const {
  auto [a, b] = broadcasted(x);
  if (dtypes::is_int(a.dtype()) && dtypes::is_int(b.dtype())) return a.alu(Ops::CMOD, b);
  return a.sub(a.div(b, false, "trunc").mul(b));
}
template <class S>
S ElementwiseMixin<S>::div(const operand_t<S>& x, bool reverse, std::string_view rounding_mode) const {
  bool none = rounding_mode.empty(), trunc_ = rounding_mode == "trunc", floor_ = rounding_mode == "floor";
  auto [a, b] = broadcasted(x, reverse);
  if (dtypes::is_int(a.dtype()) && dtypes::is_int(b.dtype())) {
    if (trunc_) return a.alu(Ops::CDIV, b);
    if (floor_) return a.alu(Ops::FLOORDIV, b);
  }
  if (dtypes::is_int(a.dtype()) || a.dtype() == dtypes::bool_) a = a.cast(dtypes::default_float());
  // alu, not *: _broadcasted already promoted these (only a bare weak CONST is kept weak)
  S d = a.alu(Ops::MUL, b.reciprocal());
  if (none) return d;
  if (trunc_) return d.trunc();
  if (floor_) return d.floor();
  throw Error("div: rounding_mode='" + std::string(rounding_mode) + "' is not supported");
}
template <class S>
S ElementwiseMixin<S>::floordiv(const operand_t<S>& x, bool reverse) const { return div(x, reverse, "floor"); }
template <class S>
S ElementwiseMixin<S>::lt(const operand_t<S>& x) const { return binop(Ops::CMPLT, x, false); }
template <class S>
S ElementwiseMixin<S>::gt(const operand_t<S>& x) const { return binop(Ops::CMPLT, x, true); }
template <class S>
S ElementwiseMixin<S>::ge(const operand_t<S>& x) const { return lt(x).logical_not(); }
template <class S>
S ElementwiseMixin<S>::le(const operand_t<S>& x) const { return gt(x).logical_not(); }
template <class S>
S ElementwiseMixin<S>::ne(const operand_t<S>& x) const { return binop(Ops::CMPNE, x, false); }
template <class S>
S ElementwiseMixin<S>::eq(const operand_t<S>& x) const { return ne(x).logical_not(); }
template <class S>
S ElementwiseMixin<S>::lshift(const operand_t<S>& x, bool reverse) const { return binop(Ops::SHL, x, reverse); }
template <class S>
S ElementwiseMixin<S>::rshift(const operand_t<S>& x, bool reverse) const { return binop(Ops::SHR, x, reverse); }
template <class S>
S ElementwiseMixin<S>::maximum(const operand_t<S>& x) const { return binop(Ops::MAX, x, false); }
template <class S>
S ElementwiseMixin<S>::inverse_() const { return this->is_floating_point() ? neg() : bitwise_not(); }
template <class S>
S ElementwiseMixin<S>::minimum(const operand_t<S>& x) const {
  auto [t, y] = broadcasted(x);
  // the int inverse is done in python, since const has weak dtype without width
  DType dt = least_upper_dtype({t.dtype(), y.dtype()});
  if (dtypes::is_float(dt)) return t.neg().alu(Ops::MAX, y.neg()).neg();
  PyConst k = dt.const_(py_add(dt.min(), dt.max()));
  return t.bitwise_xor(k).alu(Ops::MAX, y.bitwise_xor(k)).bitwise_xor(k);
}
template <class S>
S ElementwiseMixin<S>::copysign(const operand_t<S>& other) const {
  auto [a, b] = broadcasted(other);
  S mag = a.abs();
  return b.lt(0).bitwise_or(b.reciprocal().lt(0)).where(mag.neg(), mag);
}
template <class S>
S ElementwiseMixin<S>::logaddexp(const operand_t<S>& other) const {
  auto [a, b] = broadcasted(other);
  S m = a.maximum(b);
  return a.sub(m).exp().add(b.sub(m).exp()).log().add(m);
}
template <class S>
S ElementwiseMixin<S>::where(const operand_t<S>& x, const operand_t<S>& y) const {
  // ref.ufix(x)._broadcasted(y): for UOps ufix does not depend on ref
  auto [a, b] = self().ufix(x).broadcasted(y);
  return self().alu(Ops::WHERE, a, b);
}
template <class S>
S ElementwiseMixin<S>::masked_fill(const S& mask, const operand_t<S>& value) const { return mask.where(value, self()); }
template <class S>
S ElementwiseMixin<S>::threefry(const S& seed) const { return self().alu(Ops::THREEFRY, seed); }
template <class S>
S ElementwiseMixin<S>::reciprocal() const { return self().alu(Ops::RECIPROCAL); }
template <class S>
S ElementwiseMixin<S>::trunc() const { return self().alu(Ops::TRUNC); }
template <class S>
S ElementwiseMixin<S>::sqrt() const { return self().alu(Ops::SQRT); }
template <class S>
S ElementwiseMixin<S>::sin() const { return self().alu(Ops::SIN); }
template <class S>
S ElementwiseMixin<S>::cos() const {
  S s = this->cast(least_upper_float(self().dtype()));
  return s.cast(least_upper_dtype({s.dtype(), dtypes::float32})).sub(kPi / 2, true).sin().cast(s.dtype());
}
template <class S>
S ElementwiseMixin<S>::exp() const {
  S s = this->cast(least_upper_float(self().dtype()));
  return s.cast(least_upper_dtype({s.dtype(), dtypes::float32})).mul(1 / std::log(2.0)).exp2().cast(s.dtype());
}
template <class S>
S ElementwiseMixin<S>::log2() const { return self().alu(Ops::LOG2); }
template <class S>
S ElementwiseMixin<S>::exp2() const { return self().alu(Ops::EXP2); }
template <class S>
S ElementwiseMixin<S>::pow(const operand_t<S>& x, bool reverse) const {
  auto [base_, exponent] = broadcasted(x, reverse);
  // TODO (reference): int pow
  if (!dtypes::is_float(least_upper_dtype({base_.dtype(), exponent.dtype()})) && !x.is_uop()) {
    const PyConst& v = x.value();
    bool nonneg_int = (v.is_int() && v.i >= 0) || v.is_bool();
    if (!nonneg_int) throw Error("pow: base needs to be float, got " + base_.dtype().repr() + " ** " + v.repr());
  }
  return base_.alu(Ops::POW, exponent);
}
template <class S>
S ElementwiseMixin<S>::square() const { return mul(self()); }
template <class S>
S ElementwiseMixin<S>::clamp(const std::optional<operand_t<S>>& min_, const std::optional<operand_t<S>>& max_) const {
  if (!min_ && !max_) throw Error("clamp: at least one of 'min_' or 'max_' must not be None");
  S ret = min_ ? lt(*min_).where(*min_, self()) : self();
  return max_ ? ret.gt(*max_).where(*max_, ret) : ret;
}
template <class S>
S ElementwiseMixin<S>::clip(const std::optional<operand_t<S>>& min_, const std::optional<operand_t<S>>& max_) const {
  return clamp(min_, max_);
}
template <class S>
S ElementwiseMixin<S>::isnan() const { return ne(self()); }
template <class S>
S ElementwiseMixin<S>::isinf(bool detect_positive, bool detect_negative) const {
  return eq(INFINITY).mul(detect_positive).add(eq(-INFINITY).mul(detect_negative));
}
template <class S>
S ElementwiseMixin<S>::isfinite() const { return isinf().bitwise_or(isnan()).logical_not(); }
template <class S>
S ElementwiseMixin<S>::isclose(const operand_t<S>& other0, double rtol, double atol, bool equal_nan) const {
  S other = self().ufix(other0);
  S is_finite_close = isfinite()
                            .bitwise_and(other.isfinite())
                            .bitwise_and(sub(other).abs().le(other.abs().mul(rtol, true).add(atol, true)));
  S is_infinite_close = isinf().bitwise_or(other.isinf()).bitwise_and(eq(other));
  S is_nan_close = isnan().bitwise_and(other.isnan()).bitwise_and(equal_nan);
  return is_finite_close.bitwise_or(is_infinite_close).bitwise_or(is_nan_close);
}
template <class S>
S ElementwiseMixin<S>::ceil() const {
  S b = trunc();
  return gt(b).where(b.add(1), b);
}
template <class S>
S ElementwiseMixin<S>::floor() const {
  S b = trunc();
  return lt(b).where(b.sub(1), b);
}
template <class S>
S ElementwiseMixin<S>::relu() const { return gt(0).where(self(), 0); }
template <class S>
S ElementwiseMixin<S>::sigmoid() const { return mul(-1 / std::log(2.0)).exp2().add(1, true).reciprocal(); }
template <class S>
S ElementwiseMixin<S>::relu6() const { return relu().sub(sub(6).relu()); }
template <class S>
S ElementwiseMixin<S>::hardswish() const { return mul(add(3).relu6()).mul(1.0 / 6); }
template <class S>
S ElementwiseMixin<S>::hardsigmoid(double alpha, double beta) const {
  return mul(alpha, true).add(beta).relu().sub(mul(alpha, true).add(beta).sub(1).relu());
}
template <class S>
S ElementwiseMixin<S>::hardtanh(PyConst min_val, PyConst max_val) const { return clip(operand_t<S>(min_val), operand_t<S>(max_val)); }
template <class S>
S ElementwiseMixin<S>::leaky_relu(double neg_slope) const { return lt(0).where(mul(neg_slope, true), self()); }
template <class S>
S ElementwiseMixin<S>::tanh() const { return mul(2.0, true).sigmoid().mul(2.0, true).sub(1.0); }
template <class S>
S ElementwiseMixin<S>::quick_gelu() const { return mul(mul(1.702).sigmoid()); }
template <class S>
S ElementwiseMixin<S>::gelu(std::string_view approximate) const {
  if (approximate == "tanh")
    return mul(0.5, true).mul(add(pow(3).mul(0.044715, true)).mul(std::sqrt(2 / kPi), true).tanh().add(1, true));
  if (approximate == "none") return mul(0.5).mul(div(std::sqrt(2.0)).erf().add(1.0, true));
  throw Error("gelu: approximate='" + std::string(approximate) + "' is not supported");
}
template <class S>
S ElementwiseMixin<S>::swish() const { return mul(sigmoid()); }
template <class S>
S ElementwiseMixin<S>::silu() const { return swish(); }
template <class S>
S ElementwiseMixin<S>::rsqrt() const { return sqrt().reciprocal(); }
template <class S>
S ElementwiseMixin<S>::log() const { return log2().mul(std::log(2.0)); }
template <class S>
S ElementwiseMixin<S>::log10() const { return log2().mul(std::log10(2.0)); }
template <class S>
S ElementwiseMixin<S>::atanh() const { return add(1, true).div(sub(1, true)).log().div(2); }
template <class S>
S ElementwiseMixin<S>::asinh() const { return add(square().add(1).sqrt()).log(); }
template <class S>
S ElementwiseMixin<S>::acosh() const { return add(square().sub(1).sqrt()).log(); }
template <class S>
S ElementwiseMixin<S>::round() const {
  S b = trunc().div(2.0);
  return gt(0).eq(b.trunc().eq(b)).where(sub(0.5).ceil(), add(0.5).floor());
}
template <class S>
S ElementwiseMixin<S>::sign() const { return ne(0).where(lt(0).where(self().const_like(-1), self().const_like(1)), self().const_like(0)); }
template <class S>
S ElementwiseMixin<S>::abs() const { return mul(sign()); }
template <class S>
S ElementwiseMixin<S>::tan() const { return sin().div(cos()); }
template <class S>
S ElementwiseMixin<S>::asin() const {
  // https://personal.math.ubc.ca/~cbm/aands/page_81.htm 4.4.46
  S x = abs().sub(1.0, true).sqrt().mul(polyN(abs(), {-0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810,
                                                        -0.0501743046, 0.0889789874, -0.2145988016, 1.5707963050}));
  return sign().mul(x.sub(kPi / 2, true));
}
template <class S>
S ElementwiseMixin<S>::acos() const { return asin().sub(kPi / 2, true); }
template <class S>
S ElementwiseMixin<S>::atan() const { return div(mul(self()).add(1, true).sqrt()).asin(); }
template <class S>
S ElementwiseMixin<S>::elu(double alpha) const { return relu().sub(exp().sub(1, true).relu().mul(alpha, true)); }
template <class S>
S ElementwiseMixin<S>::celu(double alpha) const { return maximum(0).add(div(alpha).exp().sub(1).mul(alpha, true).minimum(0)); }
template <class S>
S ElementwiseMixin<S>::selu(double alpha, double gamma) const {
  return ge(0).where(self(), exp().sub(1).mul(alpha, true)).mul(gamma, true);
}
template <class S>
S ElementwiseMixin<S>::softplus(double beta) const { return mul(beta).logaddexp(0.0).mul(1 / beta, true); }
template <class S>
S ElementwiseMixin<S>::mish() const { return mul(softplus().tanh()); }
template <class S>
S ElementwiseMixin<S>::logsigmoid() const { return neg().softplus().neg(); }
template <class S>
S ElementwiseMixin<S>::sinh() const { return exp().sub(neg().exp()).div(2); }
template <class S>
S ElementwiseMixin<S>::cosh() const { return exp().add(neg().exp()).div(2); }
template <class S>
S ElementwiseMixin<S>::erf() const {
  // https://personal.math.ubc.ca/~cbm/aands/page_299.htm 7.1.26
  S t = abs().mul(0.3275911, true).add(1.0, true).div(1.0, true);
  S p = polyN(t, {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592});
  return sign().mul(t.mul(p).mul(square().neg().exp()).sub(1.0, true));
}
template <class S>
S ElementwiseMixin<S>::softsign() const { return div(abs().add(1, true)); }
template <class S>
S ElementwiseMixin<S>::lerp(const S& end, const operand_t<S>& weight) const {
  if (self().dtype() == dtypes::uint8 && weight.is_uop()) {
    const int W_PREC = 7;
    S w_i = self().ufix(weight).mul(1 << W_PREC).add(0.5).cast(dtypes::int16);
    return add(end.sub(self()).cast(dtypes::int8).mul(w_i).add(1 << (W_PREC - 1)).cast(dtypes::uint16).rshift(W_PREC))
        .cast(dtypes::uint8);
  }
  return add(end.sub(self()).mul(weight));
}

template class ElementwiseMixin<UOp>;
template class ElementwiseMixin<Tensor>;

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
