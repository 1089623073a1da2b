// Port of tinygrad/mixin/reduce.py: sum/prod/max/any/all with axis/keepdim and the accumulation dtype rules.
#include "lib/mixin/reduce.h"

#include <algorithm>
#include <numeric>

#include "lib/helpers.h"
#include "lib/mixin/helpers.h"
#include "lib/tensor.h"
#include "lib/uop/uop.h"

namespace tg {

using namespace mixin;

// _reduce: weak dtypes commit first, axes resolve (none for scalars), keepdim reshapes the reduced axes to 1
template <class S>
S ReduceMixin<S>::reduce_(Ops op, const AxisArg& axis_arg, bool keepdim) const {
  S x = this->cast(strong_dtype(self().dtype()));
  std::vector<int64_t> axis;
  if (axis_arg.is_none())
    for (int64_t i = 0; i < x.ndim(); i++) axis.push_back(i);
  else
    for (int64_t a : axis_arg.axes()) axis.push_back(x.resolve_dim(a));
  if (x.ndim() == 0) axis.clear();
  S ret = x.rop(op, axis);
  if (!keepdim) return ret;
  Shape ks;
  const Shape& sh = x.shape();
  for (size_t i = 0; i < sh.size(); i++)
    ks.push_back(std::find(axis.begin(), axis.end(), (int64_t)i) != axis.end() ? sint(1) : sh[i]);
  return ret.reshape(ks);
}

template <class S>
S ReduceMixin<S>::sum(const AxisArg& axis, bool keepdim, DType dtype) const {
  DType d = self().dtype();
  S ret = this->cast(dtype ? dtype : sum_acc_dtype(d)).reduce_(Ops::ADD, axis, keepdim);
  bool low = d == dtypes::float16 || d == dtypes::bfloat16 || contains(dtypes::fp8s, d);
  return !dtype && low ? ret.cast(d) : ret;
}
template <class S>
S ReduceMixin<S>::prod(const AxisArg& axis, bool keepdim, DType dtype) const {
  return this->cast(dtype ? dtype : self().dtype()).reduce_(Ops::MUL, axis, keepdim);
}
template <class S>
S ReduceMixin<S>::max(const AxisArg& axis, bool keepdim) const {
  return reduce_(Ops::MAX, axis, keepdim);
}
template <class S>
S ReduceMixin<S>::any(const AxisArg& axis, bool keepdim) const {
  return this->bool_().max(axis, keepdim);
}
template <class S>
S ReduceMixin<S>::all(const AxisArg& axis, bool keepdim) const {
  return this->bool_().prod(axis, keepdim);
}

template class ReduceMixin<UOp>;
template class ReduceMixin<Tensor>;

}  // namespace tg
