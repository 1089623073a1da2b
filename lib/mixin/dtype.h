// Port of tinygrad/mixin/dtype.py: the root of the op surface that UOp and Tensor both inherit (CRTP, as the
// reference's `class UOp(RandMixin)` and `class Tensor(RandMixin)`). Each mixin is written once, on Self, in
// lib/mixin/<name>.cpp and instantiated there for UOp and for Tensor.
//
// Self provides what the reference's mixins leave "required to implement":
//   DType dtype() const, const Shape& shape() const, Arg device() const
//   const UOp& _uop() const                         the graph (a UOp is its own)
//   static Self _wrap_uop(const UOp&)               a Self around a graph (a UOp is its own)
//   Self alu(Ops, const Self&...) const, Self const_like(PyConst, DType) const, Self ufix(operand) const
// and MixinTypes<Self>::operand, the `Self | ConstType` operand of the elementwise methods.
#pragma once
#include <string>

#include "lib/dtype.h"
#include "lib/mixin/movement.h"

namespace tg {

class UOp;
class Tensor;

template <class S>
struct MixinTypes;  // ::operand: the `Self | ConstType` argument type (Operand for UOp, TOperand for Tensor)
template <class S>
using operand_t = typename MixinTypes<S>::operand;

template <class S>
class DTypeMixin : public MovementMixin<S> {
 public:
  S cast(DType dtype) const;
  S cast(const std::string& dtype_name) const;  // dtypes.<name>, case-insensitive
  S bitcast(DType dtype) const;
  S bitcast(const std::string& dtype_name) const;
  int element_size() const;
  bool is_floating_point() const;
  S float_() const;
  S half() const;
  S int_() const;
  S bool_() const;
  S bfloat16() const;
  S double_() const;
  S long_() const;
  S short_() const;

 protected:
  using MovementMixin<S>::self;
};

}  // namespace tg
