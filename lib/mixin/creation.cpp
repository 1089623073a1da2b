// Port of tinygrad/mixin/creation.py: const-filled UOps, materialized
// (BUFFER + STORE + AFTER) unless buffer=false, and empty buffers.
#include "lib/mixin/creation.h"

#include <algorithm>
#include <cctype>

#include "lib/helpers.h"
#include "lib/mixin/helpers.h"
#include "lib/tensor.h"
#include "lib/uop/uop.h"

namespace tg {

using namespace mixin;

namespace {
// Device.canonicalize: upper-case the device name, drop a trailing ":0"
std::string canonicalize_name(std::string d) {
  size_t c = d.find(':');
  for (size_t i = 0; i < std::min(c, d.size()); i++) d[i] = (char)std::toupper((unsigned char)d[i]);
  if (d.size() >= 2 && d.compare(d.size() - 2, 2, ":0") == 0) d.resize(d.size() - 2);
  return d;
}
// Device.DEFAULT until the device registry exists: the device part of DEV (DEV=CPU:LLVM -> CPU), else CPU
std::string default_device() {
  std::string dev = getenv_str("DEV", "");
  if (dev.empty()) return "CPU";
  size_t c = dev.find(':');
  return c == std::string::npos ? dev : dev.substr(0, c);
}
// device.canonicalize_device
Arg canonicalize_device(const Arg& device) {
  if (device.is_none()) return Arg(canonicalize_name(default_device()));
  if (device.is_str()) return Arg(canonicalize_name(device.as_str()));
  if (!device.is_tuple()) throw Error("device must be a name or a tuple of names, got " + device.repr());
  std::vector<Arg> c;
  for (const Arg& d : device.items()) c.push_back(Arg(canonicalize_name(d.as_str())));
  return c.size() == 1 ? c[0] : Arg::tuple(c);
}
}  // namespace

template <class S>
S CreationMixin<S>::empty(const Shape& shape, DType dtype, Arg device) {
  DType dt = dtype ? dtype : dtypes::default_float();
  Shape max_shape;
  pyint n = 1;
  for (const sint& s : shape) {
    pyint m = s.is_int() ? s.i() : s.u().vmax().as_int();
    max_shape.push_back(m), n = sat_mul(n, m);
  }
  Arg dev = canonicalize_device(device);
  if (dev.is_tuple()) throw Error("empty: multi-device buffers are not supported yet");
  return S::_wrap_uop(UOp::new_buffer(dev, n, dt)).reshape(max_shape).shrink_to(shape);
}

template <class S>
S CreationMixin<S>::empty_like(DType dtype, Arg device) const {
  Arg dev = canonicalize_device(device.is_none() ? self().device() : device);
  if (dev.is_tuple()) throw Error("empty_like: multi-device buffers are not supported yet");
  return empty(self().shape(), dtype ? dtype : strong_dtype(self().dtype()), dev);
}

template <class S>
S CreationMixin<S>::full(const Shape& shape, const Operand& fill_value, DType dtype, Arg device, bool buffer) {
  DType dt = dtype ? dtype : fill_value.is_uop() ? fill_value.uop().dtype() : dtypes::from_py(fill_value.value());
  S val = S::_wrap_uop(fill_value.is_uop() ? UOp::const_(fill_value.uop(), dt) : UOp::const_(fill_value.value(), dt));
  val = val.reshape(Shape(shape.size(), sint(1))).expand(shape);
  if (!buffer) return val;
  S ret = val.empty_like(dtype ? dt : DType(), device);
  return S::_wrap_uop(ret._uop().after(ret._uop().store(val._uop())));
}
template <class S>
S CreationMixin<S>::full_like(PyConst fill_value, DType dtype, Arg device, bool buffer) const {
  return full(self().shape(), fill_value, dtype ? dtype : self().dtype(), device.is_none() ? self().device() : device,
              buffer);
}
template <class S>
S CreationMixin<S>::zeros(const Shape& shape, DType dtype, Arg device, bool buffer) {
  return full(shape, 0.0, dtype, device, buffer);
}
template <class S>
S CreationMixin<S>::ones(const Shape& shape, DType dtype, Arg device, bool buffer) {
  return full(shape, 1.0, dtype, device, buffer);
}
template <class S>
S CreationMixin<S>::zeros_like(DType dtype, Arg device, bool buffer) const {
  return full_like(0, dtype, device, buffer);
}
template <class S>
S CreationMixin<S>::ones_like(DType dtype, Arg device, bool buffer) const {
  return full_like(1, dtype, device, buffer);
}
template <class S>
S CreationMixin<S>::invalids(const Shape& shape, DType dtype, Arg device) {
  return full(shape, PyConst::invalid(), dtype, device);
}

template class CreationMixin<UOp>;
template class CreationMixin<Tensor>;

}  // namespace tg
