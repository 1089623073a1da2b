// The argument types of the builder mixins (lib/mixin): python's int|UOp dimensions, shapes with None entries,
// pad/shrink pairs, reduction axes and int-or-tuple arguments. Those that hold a UOp are defined after it in
// lib/uop/uop.h.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

namespace tg {

// python int|UOp (a shape dimension or symbolic value)
class sint;
using Shape = std::vector<sint>;

// argument types of the builder mixins (defined after UOp)
class Operand;     // a UOp or a python scalar: the `Self | ConstType` operand of the elementwise mixin
class OptShape;    // a shape whose entries may be nullopt (python None)
struct OptPair;    // a (sint, sint) pair or nullopt (python None), an axis of pad/shrink args
using PadArg = std::vector<OptPair>;
struct Index;      // one python index: int, slice, None, Ellipsis or a UOp

// the `axis` of reductions: nullopt (python None: every axis), one int, or a list of ints
class AxisArg {
 public:
  AxisArg() = default;
  AxisArg(std::nullopt_t) {}
  AxisArg(int a) : v_(std::vector<int64_t>{a}), scalar_(true) {}
  AxisArg(long a) : v_(std::vector<int64_t>{a}), scalar_(true) {}
  AxisArg(long long a) : v_(std::vector<int64_t>{(int64_t)a}), scalar_(true) {}
  AxisArg(std::initializer_list<int64_t> a) : v_(std::vector<int64_t>(a)) {}
  AxisArg(std::vector<int64_t> a) : v_(std::move(a)) {}
  bool is_none() const { return !v_.has_value(); }
  bool is_scalar() const { return scalar_; }  // a single int, not a list
  const std::vector<int64_t>& axes() const { return *v_; }

 private:
  std::optional<std::vector<int64_t>> v_;
  bool scalar_ = false;
};

// python int|tuple[int, ...]: a kernel size, stride, dilation or padding given once for every axis or per axis
class IntTuple {
 public:
  IntTuple(int v) : v_{v}, scalar_(true) {}
  IntTuple(long v) : v_{v}, scalar_(true) {}
  IntTuple(std::initializer_list<int64_t> v) : v_(v) {}
  IntTuple(std::vector<int64_t> v) : v_(std::move(v)) {}
  bool is_scalar() const { return scalar_; }
  const std::vector<int64_t>& values() const { return v_; }
  // helpers.make_tuple: the value repeated n times, or the tuple as given
  std::vector<int64_t> make_tuple(size_t n) const { return scalar_ ? std::vector<int64_t>(n, v_[0]) : v_; }

 private:
  std::vector<int64_t> v_;
  bool scalar_ = false;
};

}  // namespace tg
