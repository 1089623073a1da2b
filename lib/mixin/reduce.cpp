// Port of tinygrad/mixin/reduce.py: sum/prod/max/any/all with axis/keepdim and the accumulation dtype rules.
#include <algorithm>
#include <numeric>

#include "lib/helpers.h"
#include "lib/mixin/helpers.h"
#include "lib/uop/uop.h"

namespace tg {

using namespace mixin;

// _reduce: weak dtypes commit first, axes resolve (none for scalars), keepdim reshapes the reduced axes to 1
static UOp reduce_(const UOp& self0, Ops op, const AxisArg& axis_arg, bool keepdim) {
  UOp self = self0.cast(strong_dtype(self0.dtype()));
  std::vector<int64_t> axis;
  if (axis_arg.is_none())
    for (int64_t i = 0; i < self.ndim(); i++) axis.push_back(i);
  else
    for (int64_t x : axis_arg.axes()) axis.push_back(self.resolve_dim(x));
  if (self.ndim() == 0) axis.clear();
  UOp ret = self.rop(op, axis);
  if (!keepdim) return ret;
  Shape ks;
  const Shape& sh = self.shape();
  for (size_t i = 0; i < sh.size(); i++)
    ks.push_back(std::find(axis.begin(), axis.end(), (int64_t)i) != axis.end() ? sint(1) : sh[i]);
  return ret.reshape(ks);
}

UOp UOp::sum(const AxisArg& axis, bool keepdim, DType dtype) const {
  UOp ret = reduce_(cast(dtype ? dtype : sum_acc_dtype(this->dtype())), Ops::ADD, axis, keepdim);
  DType d = this->dtype();
  bool low = d == dtypes::float16 || d == dtypes::bfloat16 || contains(dtypes::fp8s, d);
  return !dtype && low ? ret.cast(d) : ret;
}
UOp UOp::prod(const AxisArg& axis, bool keepdim, DType dtype) const {
  return reduce_(cast(dtype ? dtype : this->dtype()), Ops::MUL, axis, keepdim);
}
UOp UOp::max(const AxisArg& axis, bool keepdim) const { return reduce_(*this, Ops::MAX, axis, keepdim); }
UOp UOp::any(const AxisArg& axis, bool keepdim) const { return bool_().max(axis, keepdim); }
UOp UOp::all(const AxisArg& axis, bool keepdim) const { return bool_().prod(axis, keepdim); }

}  // namespace tg
