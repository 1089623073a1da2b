// Port of tinygrad/mixin/reduce.py: sum/prod/max/any/all with axis/keepdim and the accumulation dtype rules, written
// once for UOp and Tensor (see lib/mixin/dtype.h). Self's own `_rop` (here `rop`) reduces axes without checks.
#pragma once
#include "lib/mixin/dtype.h"
#include "lib/uop/ops.h"

namespace tg {

template <class S>
class ReduceMixin : public DTypeMixin<S> {
 public:
  // axis: nullopt = all, an int or a list
  S sum(const AxisArg& axis = AxisArg(), bool keepdim = false, DType dtype = DType()) const;
  S prod(const AxisArg& axis = AxisArg(), bool keepdim = false, DType dtype = DType()) const;
  S max(const AxisArg& axis = AxisArg(), bool keepdim = false) const;
  S any(const AxisArg& axis = AxisArg(), bool keepdim = false) const;
  S all(const AxisArg& axis = AxisArg(), bool keepdim = false) const;

 protected:
  using DTypeMixin<S>::self;
  S reduce_(Ops op, const AxisArg& axis, bool keepdim) const;  // _reduce
};

}  // namespace tg
