// Port of tinygrad/nn/__init__.py: the layers. Parameters are Tensors initialized like the reference (same RNG calls
// in the same order, so a seeded model has bit-identical weights); a layer is called with operator().
//   tg::Tensor::manual_seed(1337);
//   tg::nn::Conv2d c1(1, 32, 5);  tg::nn::BatchNorm bn(32);  tg::nn::Linear fc(576, 10);
//   tg::Tensor y = fc(bn(c1(x).relu()).max_pool2d().flatten(1));
// BatchNorm updates its running statistics when TRAINING is set (Context or the TRAINING env var), like the reference.
// state_dict() lists a layer's tensors by name in the order of the reference's get_state_dict (attribute order).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "lib/helpers.h"
#include "lib/nn/state.h"
#include "lib/tensor.h"

namespace tg {

extern ContextVar TRAINING;  // helpers.TRAINING

namespace nn {

class BatchNorm {
 public:
  explicit BatchNorm(int64_t sz, double eps = 1e-5, bool affine = true, bool track_running_stats = true,
                     double momentum = 0.1);
  Tensor operator()(const Tensor& x);
  StateDict state_dict() const;
  std::pair<Tensor, Tensor> calc_stats(const Tensor& x) const;
  double eps, momentum;
  bool track_running_stats;
  std::optional<Tensor> weight, bias;
  Tensor num_batches_tracked;
  std::optional<Tensor> running_mean, running_var;
};
using BatchNorm2d = BatchNorm;
using BatchNorm3d = BatchNorm;

// padding: one int, one per spatial axis, torch-style flat pairs, or "same" (stride 1 only)
struct Padding {
  Padding(int p) : value(p) {}                       // NOLINT
  Padding(std::initializer_list<int64_t> p) : value(std::vector<int64_t>(p)) {}  // NOLINT
  Padding(std::vector<int64_t> p) : value(std::move(p)) {}                        // NOLINT
  Padding(const char* s) : value(0), same(s) {}      // NOLINT
  IntTuple value;
  std::string same;
};

class Conv2d {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, const IntTuple& kernel_size, const IntTuple& stride = 1,
         const Padding& padding = 0, const IntTuple& dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor operator()(const Tensor& x) const;
  StateDict state_dict() const;
  std::vector<int64_t> kernel_size;
  IntTuple stride, dilation, padding;
  int64_t groups;
  Tensor weight;
  std::optional<Tensor> bias;
};
Conv2d Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1,
              const Padding& padding = 0, int64_t dilation = 1, int64_t groups = 1, bool bias = true);

class ConvTranspose2d : public Conv2d {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, const IntTuple& kernel_size, const IntTuple& stride = 1,
                  const IntTuple& padding = 0, const IntTuple& output_padding = 0, const IntTuple& dilation = 1,
                  int64_t groups = 1, bool bias = true);
  Tensor operator()(const Tensor& x) const;
  StateDict state_dict() const;
  IntTuple output_padding;
};

class Linear {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor operator()(const Tensor& x) const;
  StateDict state_dict() const;
  Tensor weight;
  std::optional<Tensor> bias;
};

class GroupNorm {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor operator()(const Tensor& x) const;
  StateDict state_dict() const;
  int64_t num_groups, num_channels;
  double eps;
  std::optional<Tensor> weight, bias;
};

class InstanceNorm {
 public:
  explicit InstanceNorm(int64_t num_features, double eps = 1e-5, bool affine = true);
  Tensor operator()(const Tensor& x) const;
  StateDict state_dict() const;
  int64_t num_features;
  double eps;
  std::optional<Tensor> weight, bias;
};

class LayerNorm {
 public:
  explicit LayerNorm(const Shape& normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  explicit LayerNorm(int64_t normalized_shape, double eps = 1e-5, bool elementwise_affine = true)
      : LayerNorm(Shape{normalized_shape}, eps, elementwise_affine) {}
  Tensor operator()(const Tensor& x) const;
  StateDict state_dict() const;
  Shape normalized_shape;
  std::vector<int64_t> axis;
  double eps;
  std::optional<Tensor> weight, bias;
};

class LayerNorm2d : public LayerNorm {
 public:
  using LayerNorm::LayerNorm;
  Tensor operator()(const Tensor& x) const;
  StateDict state_dict() const;
};

class RMSNorm {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6, bool elementwise_affine = true);
  Tensor operator()(const Tensor& x) const;
  StateDict state_dict() const;
  double eps;
  std::optional<Tensor> weight;
};

// the lookup by comparing with an arange (the reference's path without USE_ATOMICS)
class Embedding {
 public:
  Embedding(int64_t vocab_size, int64_t embed_size);
  Tensor operator()(const Tensor& idx) const;
  StateDict state_dict() const;
  int64_t vocab_size, embed_size;
  Tensor weight;
};

class LSTMCell {
 public:
  LSTMCell(int64_t input_size, int64_t hidden_size, bool bias = true);
  // (h, c); without a state the cell starts from zeros
  std::pair<Tensor, Tensor> operator()(const Tensor& x, const std::optional<std::pair<Tensor, Tensor>>& hc = {}) const;
  StateDict state_dict() const;
  Tensor weight_ih, weight_hh;
  std::optional<Tensor> bias_ih, bias_hh;
};

}  // namespace nn
}  // namespace tg
