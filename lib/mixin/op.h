// Port of the graph-building part of tinygrad/mixin/op.py: __getitem__ (basic indexing and index tensors),
// arange/linspace/eye/triu/tril, pad modes, dot/matmul/einsum, min/mean/var/std, softmax/log_softmax/logsumexp, cat,
// cumulative ops, argmax/argmin, one_hot, sequential, linear, gather/scatter, sort/topk, pooling, convolution,
// normalization and losses, written once for UOp and Tensor (see lib/mixin/dtype.h).
#pragma once
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/mixin/elementwise.h"

namespace tg {

template <class S>
class OpMixin : public ElementwiseMixin<S> {
 public:
  S getitem(const std::vector<Index>& indices) const;  // __getitem__ (basic indexing and index tensors)
  S operator[](const std::vector<Index>& indices) const { return getitem(indices); }
  S getitem(const S& index) const;  // one index tensor
  S operator[](int64_t i) const;
  static S arange(PyConst start, std::optional<PyConst> stop = std::nullopt, PyConst step = 1, DType dtype = DType());
  static S linspace(PyConst start, PyConst stop, int64_t steps, DType dtype = DType());
  static S eye(int64_t n, std::optional<int64_t> m = std::nullopt, DType dtype = DType());
  S triu(int64_t diagonal = 0) const;
  S tril(int64_t diagonal = 0) const;
  // OpMixin.pad: grouped (before, after) pairs (nullopt = none) or flat torch-style pads; negative pads shrink.
  // mode: "constant", "reflect", "replicate", "circular"
  S pad(const PadArg& padding, std::string_view mode = "constant", PyConst value = 0.0) const;
  S pad_flat(const std::vector<sint>& padding, std::string_view mode = "constant", PyConst value = 0.0) const;
  S pad_to(const OptShape& shape, PyConst value = 0) const;
  S dot(const S& w, DType dtype = DType()) const;
  S matmul(const S& x, bool reverse = false, DType dtype = DType()) const;
  S min(const AxisArg& axis = AxisArg(), bool keepdim = false) const;
  S mean(const AxisArg& axis = AxisArg(), bool keepdim = false) const;
  S var(const AxisArg& axis = AxisArg(), bool keepdim = false, PyConst correction = 1) const;
  std::pair<S, S> var_mean(const AxisArg& axis = AxisArg(), bool keepdim = false, PyConst correction = 1) const;
  S std(const AxisArg& axis = AxisArg(), bool keepdim = false, PyConst correction = 1) const;
  std::pair<S, S> std_mean(const AxisArg& axis = AxisArg(), bool keepdim = false, PyConst correction = 1) const;
  S normalize(double p = 2.0, int64_t dim = 1, double eps = 1e-12) const;
  S logsumexp(const AxisArg& axis = AxisArg(), bool keepdim = false) const;
  S softmax(int64_t axis = -1, DType dtype = DType()) const;
  S log_softmax(int64_t axis = -1, DType dtype = DType()) const;
  S softmin(int64_t axis = -1, DType dtype = DType()) const;
  S cat(std::span<const S> others, int64_t dim = 0) const;
  S cat(std::initializer_list<S> others, int64_t dim = 0) const {
    return cat(std::span<const S>(others.begin(), others.size()), dim);
  }
  S cumalu(int64_t axis, Ops op) const;        // _cumalu
  S split_cumalu(int64_t axis, Ops op) const;  // _split_cumalu
  S cumsum(int64_t axis = 0) const;
  S cumprod(int64_t axis) const;
  std::pair<S, S> cummax(int64_t axis = 0) const;
  std::pair<S, S> cummin(int64_t axis = 0) const;
  S logcumsumexp(int64_t axis = 0) const;
  S argmax(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  S argmin(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  S allclose(const S& other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) const;
  S one_hot_along_dim(const sint& num_classes, int64_t dim = -1) const;  // _one_hot_along_dim
  S one_hot(int64_t num_classes) const;
  S sequential(const std::vector<std::function<S(const S&)>>& ll) const;
  S linear(const S& weight, const std::optional<S>& bias = std::nullopt, DType dtype = DType()) const;
  static S einsum(const std::string& formula, std::span<const S> operands, DType dtype = DType());
  static S einsum(const std::string& formula, std::initializer_list<S> operands, DType dtype = DType()) {
    return einsum(formula, std::span<const S>(operands.begin(), operands.size()), dtype);
  }
  S gather(int64_t dim, const S& index) const;
  S interpolate(const std::vector<int64_t>& size, std::string_view mode = "linear", bool align_corners = false) const;
  // scatter: reduce is "", "add" or "multiply"; scatter_reduce: "sum", "prod", "mean", "amax" or "amin"
  S scatter(int64_t dim, const S& index, const operand_t<S>& src, std::string_view reduce = {}) const;
  S scatter_reduce(int64_t dim, const S& index, const S& src, std::string_view reduce,
                     bool include_self = true) const;
  S masked_merge(const S& values, const S& mask, const std::vector<int64_t>& axes) const;  // _masked_merge
  // the fixed-size forms only: without a size the reference reads the count back from the device
  S masked_select(const S& mask, int64_t size, PyConst fill_value = 0) const;
  S nonzero(int64_t size, PyConst fill_value = 0) const;
  std::pair<S, S> sort(int64_t dim = -1, bool descending = false) const;  // bitonic sort: (values, indices)
  S argsort(int64_t dim = -1, bool descending = false) const;
  std::pair<S, S> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted_ = true) const;
  // pooling and convolution over the last len(kernel) axes; padding: one int, one per axis, or torch-style flat pairs
  S avg_pool2d(const IntTuple& kernel_size = {2, 2}, const std::optional<IntTuple>& stride = std::nullopt,
                 const IntTuple& dilation = 1, const IntTuple& padding = 0, bool ceil_mode = false,
                 bool count_include_pad = true) const;
  S max_pool2d(const IntTuple& kernel_size = {2, 2}, const std::optional<IntTuple>& stride = std::nullopt,
                 const IntTuple& dilation = 1, const IntTuple& padding = 0, bool ceil_mode = false) const;
  // max_pool2d(return_indices=True): (values, indices)
  std::pair<S, S> max_pool2d_with_indices(const IntTuple& kernel_size = {2, 2},
                                              const std::optional<IntTuple>& stride = std::nullopt,
                                              const IntTuple& dilation = 1, const IntTuple& padding = 0,
                                              bool ceil_mode = false) const;
  S max_unpool2d(const S& indices, const IntTuple& kernel_size = {2, 2},
                   const std::optional<IntTuple>& stride = std::nullopt, const IntTuple& dilation = 1,
                   const IntTuple& padding = 0, const std::optional<Shape>& output_size = std::nullopt) const;
  S conv2d(const S& weight, const std::optional<S>& bias = std::nullopt, int64_t groups = 1,
             const IntTuple& stride = 1, const IntTuple& dilation = 1, const IntTuple& padding = 0,
             DType dtype = DType()) const;
  S conv_transpose2d(const S& weight, const std::optional<S>& bias = std::nullopt, int64_t groups = 1,
                       const IntTuple& stride = 1, const IntTuple& dilation = 1, const IntTuple& padding = 0,
                       const IntTuple& output_padding = 0) const;
  S layernorm(const AxisArg& axis = -1, double eps = 1e-5) const;
  S batchnorm(const std::optional<S>& weight, const std::optional<S>& bias, const S& mean, const S& invstd,
                const AxisArg& axis = 1) const;
  // losses; reduction: "mean", "sum" or "none"
  S binary_crossentropy(const S& Y, std::string_view reduction = "mean") const;
  S binary_crossentropy_logits(const S& Y, std::string_view reduction = "mean",
                                 const std::optional<S>& pos_weight = std::nullopt) const;
  S sparse_categorical_crossentropy(const S& Y, int64_t ignore_index = -1, double label_smoothing = 0.0,
                                      std::string_view reduction = "mean") const;
  S cross_entropy(const S& Y, std::string_view reduction = "mean", double label_smoothing = 0.0) const;
  S nll_loss(const S& Y, const std::optional<S>& weight = std::nullopt,
               std::optional<int64_t> ignore_index = std::nullopt, std::string_view reduction = "mean") const;

 protected:
  using ElementwiseMixin<S>::self;
};

}  // namespace tg
