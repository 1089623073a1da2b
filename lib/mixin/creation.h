// Port of tinygrad/mixin/creation.py: const-filled tensors, materialized (BUFFER + STORE + AFTER) unless
// buffer=false, and empty buffers, written once for UOp and Tensor (see lib/mixin/dtype.h).
// A null `device` is the default device: DEV's device part, else "CPU".
#pragma once
#include "lib/mixin/reduce.h"
#include "lib/uop/arg.h"

namespace tg {

template <class S>
class CreationMixin : public ReduceMixin<S> {
 public:
  static S empty(const Shape& shape, DType dtype = DType(), Arg device = {});
  S empty_like(DType dtype = DType(), Arg device = {}) const;
  static S invalids(const Shape& shape, DType dtype = DType(), Arg device = {});
  // fill_value: a python scalar or a UOp (ConstType|UOp)
  static S full(const Shape& shape, const Operand& fill_value, DType dtype = DType(), Arg device = {},
                bool buffer = true);
  S full_like(PyConst fill_value, DType dtype = DType(), Arg device = {}, bool buffer = true) const;
  static S zeros(const Shape& shape, DType dtype = DType(), Arg device = {}, bool buffer = true);
  S zeros_like(DType dtype = DType(), Arg device = {}, bool buffer = true) const;
  static S ones(const Shape& shape, DType dtype = DType(), Arg device = {}, bool buffer = true);
  S ones_like(DType dtype = DType(), Arg device = {}, bool buffer = true) const;

 protected:
  using ReduceMixin<S>::self;
};

}  // namespace tg
