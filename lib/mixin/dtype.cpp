// Port of tinygrad/mixin/dtype.py: cast, bitcast and the dtype shorthands.
#include "lib/mixin/dtype.h"

#include <algorithm>
#include <cctype>

#include "lib/helpers.h"
#include "lib/tensor.h"
#include "lib/uop/uop.h"

namespace tg {

// dtype.to_dtype: a dtype by its dtypes.<name> (case-insensitive)
static DType to_dtype(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return (char)std::tolower(c); });
  return dtypes::by_name(lower);
}

template <class S>
S DTypeMixin<S>::cast(DType d) const {
  return self().dtype() == d ? self() : S::_wrap_uop(UOp(Ops::CAST, d, {self()._uop()}, Arg(d)));
}
template <class S>
S DTypeMixin<S>::cast(const std::string& dtype_name) const {
  return cast(to_dtype(dtype_name));
}
template <class S>
S DTypeMixin<S>::bitcast(DType d) const {
  DType dt = self().dtype();
  if (contains(dtypes::weaks, dt) || contains(dtypes::weaks, d))
    throw Error("bitcast requires concrete dtypes, got " + dt.repr() + " -> " + d.repr());
  return dt == d ? self() : S::_wrap_uop(UOp(Ops::BITCAST, d, {self()._uop()}, Arg(d)));
}
template <class S>
S DTypeMixin<S>::bitcast(const std::string& dtype_name) const {
  return bitcast(to_dtype(dtype_name));
}
template <class S>
int DTypeMixin<S>::element_size() const {
  DType dt = self().dtype();
  if (contains(dtypes::weaks, dt)) throw Error("element_size requires a concrete dtype, got " + dt.repr());
  return dt.itemsize();
}
template <class S>
bool DTypeMixin<S>::is_floating_point() const {
  return dtypes::is_float(self().dtype());
}
// clang-format off
template <class S> S DTypeMixin<S>::float_() const { return cast(dtypes::float32); }
template <class S> S DTypeMixin<S>::half() const { return cast(dtypes::float16); }
template <class S> S DTypeMixin<S>::int_() const { return cast(dtypes::int32); }
template <class S> S DTypeMixin<S>::bool_() const { return cast(dtypes::bool_); }
template <class S> S DTypeMixin<S>::bfloat16() const { return cast(dtypes::bfloat16); }
template <class S> S DTypeMixin<S>::double_() const { return cast(dtypes::float64); }
template <class S> S DTypeMixin<S>::long_() const { return cast(dtypes::int64); }
template <class S> S DTypeMixin<S>::short_() const { return cast(dtypes::int16); }
// clang-format on

template class DTypeMixin<UOp>;
template class DTypeMixin<Tensor>;

}  // namespace tg
