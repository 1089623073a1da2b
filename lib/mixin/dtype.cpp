// Port of tinygrad/mixin/dtype.py: cast, bitcast and the dtype shorthands.
#include <algorithm>
#include <cctype>

#include "lib/helpers.h"
#include "lib/uop/uop.h"

namespace tg {

// dtype.to_dtype: a dtype by its dtypes.<name> (case-insensitive)
static DType to_dtype(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return (char)std::tolower(c); });
  return dtypes::by_name(lower);
}

UOp UOp::cast(DType d) const { return dtype() == d ? *this : UOp(Ops::CAST, d, {*this}, Arg(d)); }
UOp UOp::cast(const std::string& dtype_name) const { return cast(to_dtype(dtype_name)); }
UOp UOp::bitcast(DType d) const {
  if (contains(dtypes::weaks, dtype()) || contains(dtypes::weaks, d))
    throw Error("bitcast requires concrete dtypes, got " + dtype().repr() + " -> " + d.repr());
  return dtype() == d ? *this : UOp(Ops::BITCAST, d, {*this}, Arg(d));
}
UOp UOp::bitcast(const std::string& dtype_name) const { return bitcast(to_dtype(dtype_name)); }
int UOp::element_size() const {
  if (contains(dtypes::weaks, dtype())) throw Error("element_size requires a concrete dtype, got " + dtype().repr());
  return dtype().itemsize();
}
bool UOp::is_floating_point() const { return dtypes::is_float(dtype()); }
UOp UOp::float_() const { return cast(dtypes::float32); }
UOp UOp::half() const { return cast(dtypes::float16); }
UOp UOp::int_() const { return cast(dtypes::int32); }
UOp UOp::bool_() const { return cast(dtypes::bool_); }
UOp UOp::bfloat16() const { return cast(dtypes::bfloat16); }
UOp UOp::double_() const { return cast(dtypes::float64); }
UOp UOp::long_() const { return cast(dtypes::int64); }
UOp UOp::short_() const { return cast(dtypes::int16); }

}  // namespace tg
