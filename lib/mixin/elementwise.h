// Port of tinygrad/mixin/elementwise.py: broadcasting with type promotion, arithmetic, comparisons, bitwise ops,
// where, pow and the math/activation functions, written once for UOp and Tensor (see lib/mixin/dtype.h).
// Operands are Self or python scalars (operand_t<S>); a scalar becomes a weak CONST like in the reference.
#pragma once
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "lib/dtype.h"
#include "lib/mixin/creation.h"
#include "lib/uop/ops.h"

namespace tg {

template <class S>
class ElementwiseMixin : public CreationMixin<S> {
 public:
  std::pair<S, S> broadcasted(const operand_t<S>& y, bool reverse = false) const;  // _broadcasted
  S binop(Ops op, const operand_t<S>& x, bool reverse = false) const;               // _binop
  S usum(std::span<const S> more) const;
  S uprod(std::span<const S> more) const;
  static S usum_of(std::span<const S> all);  // type(self).usum(*all): functools.reduce over a non-empty list
  static S uprod_of(std::span<const S> all);
  S detach() const;
  S logical_not() const;
  S contiguous() const;
  S contiguous_backward() const;
  S neg() const;
  S add(const operand_t<S>& x, bool reverse = false) const;
  S sub(const operand_t<S>& x, bool reverse = false) const;
  S mul(const operand_t<S>& x, bool reverse = false) const;
  S bitwise_not() const;
  S bitwise_and(const operand_t<S>& x, bool reverse = false) const;
  S bitwise_or(const operand_t<S>& x, bool reverse = false) const;
  S bitwise_xor(const operand_t<S>& x, bool reverse = false) const;
  S mod(const operand_t<S>& x, bool reverse = false) const;  // python %
  S fmod(const operand_t<S>& x) const;
  // python /; rounding_mode "trunc" or "floor" (python //), anything else throws
  S div(const operand_t<S>& x, bool reverse = false, std::string_view rounding_mode = {}) const;
  S floordiv(const operand_t<S>& x, bool reverse = false) const;  // python //
  S lt(const operand_t<S>& x) const;                              // python <
  S gt(const operand_t<S>& x) const;                              // python >
  S le(const operand_t<S>& x) const;                              // python <=
  S ge(const operand_t<S>& x) const;                              // python >=
  S ne(const operand_t<S>& x) const;
  S eq(const operand_t<S>& x) const;
  S lshift(const operand_t<S>& x, bool reverse = false) const;
  S rshift(const operand_t<S>& x, bool reverse = false) const;
  S maximum(const operand_t<S>& x) const;
  S inverse_() const;  // _inverse: -x for floats, ~x otherwise
  S minimum(const operand_t<S>& x) const;
  S copysign(const operand_t<S>& other) const;
  S logaddexp(const operand_t<S>& other) const;
  S where(const operand_t<S>& x, const operand_t<S>& y) const;
  S masked_fill(const S& mask, const operand_t<S>& value) const;
  S threefry(const S& seed) const;
  S reciprocal() const;
  S trunc() const;
  S sqrt() const;
  S sin() const;
  S cos() const;
  S exp() const;
  S log2() const;
  S exp2() const;
  S pow(const operand_t<S>& x, bool reverse = false) const;
  S square() const;
  S clamp(const std::optional<operand_t<S>>& min_, const std::optional<operand_t<S>>& max_) const;
  S clip(const std::optional<operand_t<S>>& min_, const std::optional<operand_t<S>>& max_) const;
  S isnan() const;
  S isinf(bool detect_positive = true, bool detect_negative = true) const;
  S isfinite() const;
  S isclose(const operand_t<S>& other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) const;
  S ceil() const;
  S floor() const;
  S relu() const;
  S sigmoid() const;
  S relu6() const;
  S hardswish() const;
  S hardsigmoid(double alpha = 1.0 / 6, double beta = 0.5) const;
  S hardtanh(PyConst min_val = -1, PyConst max_val = 1) const;
  S leaky_relu(double neg_slope = 0.01) const;
  S tanh() const;
  S quick_gelu() const;
  S gelu(std::string_view approximate = "tanh") const;
  S swish() const;
  S silu() const;
  S rsqrt() const;
  S log() const;
  S log10() const;
  S atanh() const;
  S asinh() const;
  S acosh() const;
  S round() const;
  S sign() const;
  S abs() const;
  S tan() const;
  S asin() const;
  S acos() const;
  S atan() const;
  S elu(double alpha = 1.0) const;
  S celu(double alpha = 1.0) const;
  S selu(double alpha = 1.67326, double gamma = 1.0507) const;
  S softplus(double beta = 1.0) const;
  S mish() const;
  S logsigmoid() const;
  S sinh() const;
  S cosh() const;
  S erf() const;
  S softsign() const;
  S lerp(const S& end, const operand_t<S>& weight) const;

 protected:
  using CreationMixin<S>::self;
};

}  // namespace tg
