// Port of tinygrad/mixin/movement.py: reshape (with -1 and None), expand/broadcasting, permute, pad, shrink, flip,
// stack and the movement ops built from them, written once for UOp and Tensor (see lib/mixin/dtype.h). The root of
// the op surface: Self's own `_mop` (here `mop`) builds one movement node without checks.
// Shapes are python tuples of int|UOp; -1 asks reshape to infer a size, -1 or nullopt asks expand to keep one.
#pragma once
#include <concepts>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/dtype.h"
#include "lib/mixin/types.h"

namespace tg {

class UOp;
class Tensor;

template <class S>
class MovementMixin {
 public:
  int64_t ndim() const;
  sint numel() const;
  std::vector<pyint> max_shape() const;  // symbolic dims replaced by their vmax
  pyint max_numel() const;
  sint size(int64_t dim) const;
  int64_t resolve_dim(int64_t dim, bool extra = false) const;  // _resolve_dim
  S broadcast_to(const Shape& new_shape) const;               // _broadcast_to
  S expand(const OptShape& shape) const;
  S reshape(const Shape& shape) const;
  // a python tuple with None entries: None keeps that axis's size
  S reshape(std::initializer_list<std::optional<sint>> shape) const;
  S view(const Shape& shape) const { return reshape(shape); }
  S movement_pad(const PadArg& arg) const;  // MovementMixin.pad: (before, after) per axis, nullopt = none
  S shrink(const PadArg& arg) const;         // (start, end) per axis, nullopt = all
  S permute(const std::vector<int64_t>& order) const;
  S flip(const std::vector<int64_t>& axis) const;
  template <std::integral I>  // one axis (a template, so that flip({}) stays the empty list)
  S flip(I axis) const {
    return flip(std::vector<int64_t>{(int64_t)axis});
  }
  // Self.stack(*srcs, dim=...): srcs[0].stack(*srcs[1:], dim=dim)
  static S stack(std::span<const S> srcs, int64_t dim = 0);
  static S stack(std::initializer_list<S> srcs, int64_t dim = 0) {
    return stack(std::span<const S>(srcs.begin(), srcs.size()), dim);
  }
  S shrink_to(const OptShape& shape) const;
  S movement_pad_to(const OptShape& shape) const;  // MovementMixin.pad_to
  S squeeze(std::optional<int64_t> dim = std::nullopt) const;
  S unsqueeze(int64_t dim) const;
  S T() const { return transpose(); }
  S transpose(int64_t dim0 = 1, int64_t dim1 = 0) const;
  S flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  S unflatten(int64_t dim, const Shape& sizes) const;
  S rearrange(const std::string& formula, const std::vector<std::pair<std::string, int64_t>>& sizes = {}) const;
  std::vector<S> split(int64_t size, int64_t dim = 0) const;
  std::vector<S> split(const std::vector<int64_t>& sizes, int64_t dim = 0) const;
  std::vector<S> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<S> meshgrid(std::span<const S> others, std::string_view indexing = "ij") const;
  S diag() const;
  S diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  S roll(const std::vector<int64_t>& shifts, const std::optional<std::vector<int64_t>>& dims = std::nullopt) const;
  S repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt) const;
  S repeat(const std::vector<sint>& repeats) const;
  S pool(const Shape& k, const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation) const;  // _pool
  S pool(const Shape& k, int64_t stride = 1, int64_t dilation = 1) const;
  S unfold(int64_t dim, int64_t size, int64_t step) const;

 protected:
  const S& self() const { return static_cast<const S&>(*this); }
};

}  // namespace tg
