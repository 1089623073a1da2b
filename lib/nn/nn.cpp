#include "lib/nn/nn.h"

#include <cmath>

#include "lib/mixin/helpers.h"

namespace tg {

ContextVar TRAINING("TRAINING", 0, 0, 1);

namespace nn {

namespace {

int64_t prod(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

Shape shape_of(std::initializer_list<int64_t> a, const std::vector<int64_t>& rest = {}) {
  Shape s;
  for (int64_t x : a) s.push_back(sint((pyint)x));
  for (int64_t x : rest) s.push_back(sint((pyint)x));
  return s;
}

// x.reshape(1, -1, *[1] * (ndim-2))
Shape channel_shape(const Tensor& x) {
  Shape s{sint(1), sint(-1)};
  for (int64_t i = 2; i < x.ndim(); i++) s.push_back(sint(1));
  return s;
}

}  // namespace

// ***** BatchNorm *****

BatchNorm::BatchNorm(int64_t sz, double eps, bool affine, bool track_running_stats, double momentum)
    : eps(eps), momentum(momentum), track_running_stats(track_running_stats) {
  // the reference's order: each tensor's buffer takes the next unique number when it is made, so weight and bias come
  // before num_batches_tracked, as in a model the reference builds (its graphs then name the same buffers)
  if (affine) weight = Tensor::ones({sz}), bias = Tensor::zeros({sz});
  num_batches_tracked = Tensor::zeros({}, dtypes::int64).is_param_(false);
  if (track_running_stats)
    running_mean = Tensor::zeros({sz}).is_param_(false), running_var = Tensor::ones({sz}).is_param_(false);
}

std::pair<Tensor, Tensor> BatchNorm::calc_stats(const Tensor& x) const {
  Shape shape_mask = channel_shape(x);
  if (track_running_stats && !TRAINING.value()) return {*running_mean, running_var->reshape(shape_mask)};
  std::vector<int64_t> reduce_axes;
  for (int64_t i = 0; i < x.ndim(); i++)
    if (i != 1) reduce_axes.push_back(i);
  Tensor batch_mean = x.mean(AxisArg(reduce_axes));
  Tensor y = x - batch_mean.detach().reshape(shape_mask);  // d(var)/d(mean) = 0
  Tensor batch_var = (y * y).mean(AxisArg(reduce_axes));
  return {batch_mean, batch_var};
}

Tensor BatchNorm::operator()(const Tensor& x) {
  auto [batch_mean, batch_var] = calc_stats(x);
  if (track_running_stats && TRAINING.value()) {
    running_mean->assign((1 - momentum) * *running_mean + momentum * batch_mean.detach());
    pyint n = x.numel().i(), c = x.shape()[1].i();
    running_var->assign((1 - momentum) * *running_var +
                        momentum * (double)n / (double)(n - c) * batch_var.detach());
    num_batches_tracked.assign(num_batches_tracked + 1);
  }
  Tensor invstd = batch_var.add(eps).rsqrt();
  return x.apply([&](const UOp& u) {
    return u.batchnorm(weight ? std::optional<UOp>(weight->uop()) : std::nullopt,
                       bias ? std::optional<UOp>(bias->uop()) : std::nullopt, batch_mean.uop(), invstd.uop());
  });
}

// ***** convolutions *****

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, const IntTuple& ks, const IntTuple& stride,
               const Padding& padding, const IntTuple& dilation, int64_t groups, bool bias)
    : kernel_size(ks.make_tuple(2)), stride(stride), dilation(dilation), padding(padding.value), groups(groups) {
  if (!padding.same.empty()) {
    std::string p = padding.same;
    for (char& ch : p) ch = (char)std::tolower(ch);
    if (p != "same") throw Error("Invalid padding string '" + padding.same + "', only 'same' is supported");
    if (!(stride.is_scalar() && stride.values()[0] == 1) && stride.make_tuple(kernel_size.size()) != std::vector<int64_t>(kernel_size.size(), 1))
      throw Error("padding='same' is not supported for strided convolutions");
    std::vector<int64_t> dil = dilation.make_tuple(kernel_size.size()), flat;
    for (size_t i = kernel_size.size(); i-- > 0;) {
      int64_t d = dil[kernel_size.size() - 1 - i], k = kernel_size[i];  // zip(dilation, kernel_size[::-1])
      flat.push_back(d * (k - 1) / 2);
      flat.push_back(d * (k - 1) - d * (k - 1) / 2);
    }
    this->padding = IntTuple(flat);
  }
  if (groups <= 0 || in_channels % groups != 0)
    throw Error("Conv2d: in_channels " + std::to_string(in_channels) + " is not divisible by groups " +
                std::to_string(groups));
  double scale = 1.0 / std::sqrt((double)(in_channels * prod(kernel_size)));
  weight = Tensor::uniform(shape_of({out_channels, in_channels / groups}, kernel_size), -scale, scale);
  if (bias) this->bias = Tensor::uniform(shape_of({out_channels}), -scale, scale);
}

Tensor Conv2d::operator()(const Tensor& x) const { return x.conv2d(weight, bias, groups, stride, dilation, padding); }

Conv2d Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride, const Padding& padding,
              int64_t dilation, int64_t groups, bool bias) {
  return Conv2d(in_channels, out_channels, IntTuple(std::vector<int64_t>{kernel_size}), (int)stride, padding,
                (int)dilation, groups, bias);
}

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, const IntTuple& ks,
                                 const IntTuple& stride, const IntTuple& padding, const IntTuple& output_padding,
                                 const IntTuple& dilation, int64_t groups, bool bias)
    : Conv2d(in_channels, out_channels, ks, stride, Padding(padding.values()), dilation, groups, bias),
      output_padding(output_padding) {
  if (padding.is_scalar()) this->padding = padding;
  double scale = 1.0 / std::sqrt((double)(in_channels * prod(kernel_size)));
  weight = Tensor::uniform(shape_of({in_channels, out_channels / groups}, kernel_size), -scale, scale);
}

Tensor ConvTranspose2d::operator()(const Tensor& x) const {
  std::optional<UOp> b = bias ? std::optional<UOp>(bias->uop()) : std::nullopt;
  return x.apply([&](const UOp& u) {
    return u.conv_transpose2d(weight.uop(), b, groups, stride, dilation, padding, output_padding);
  });
}

// ***** Linear *****

Linear::Linear(int64_t in_features, int64_t out_features, bool bias) {
  double bound = 1.0 / std::sqrt((double)in_features);
  weight = Tensor::uniform(shape_of({out_features, in_features}), -bound, bound);
  if (bias) this->bias = Tensor::uniform(shape_of({out_features}), -bound, bound);
}

Tensor Linear::operator()(const Tensor& x) const { return x.linear(weight.transpose(), bias); }

// ***** normalizations *****

GroupNorm::GroupNorm(int64_t num_groups, int64_t num_channels, double eps, bool affine)
    : num_groups(num_groups), num_channels(num_channels), eps(eps) {
  if (affine) weight = Tensor::ones({num_channels}), bias = Tensor::zeros({num_channels});
}

Tensor GroupNorm::operator()(const Tensor& x) const {
  Tensor y = x.reshape({x.shape()[0], sint((pyint)num_groups), sint(-1)}).layernorm(-1, eps).reshape(x.shape());
  if (!weight || !bias) return y;
  return y * weight->reshape(channel_shape(y)) + bias->reshape(channel_shape(y));
}

InstanceNorm::InstanceNorm(int64_t num_features, double eps, bool affine) : num_features(num_features), eps(eps) {
  if (affine) weight = Tensor::ones({num_features}), bias = Tensor::zeros({num_features});
}

Tensor InstanceNorm::operator()(const Tensor& x) const {
  Tensor y = x.reshape({x.shape()[0], sint((pyint)num_features), sint(-1)}).layernorm(-1, eps).reshape(x.shape());
  if (!weight || !bias) return y;
  return y * weight->reshape(channel_shape(y)) + bias->reshape(channel_shape(y));
}

LayerNorm::LayerNorm(const Shape& normalized_shape, double eps, bool elementwise_affine)
    : normalized_shape(normalized_shape), eps(eps) {
  for (size_t i = 0; i < normalized_shape.size(); i++) axis.push_back(-1 - (int64_t)i);
  if (elementwise_affine) weight = Tensor::ones(normalized_shape), bias = Tensor::zeros(normalized_shape);
}

Tensor LayerNorm::operator()(const Tensor& x) const {
  const Shape& s = x.shape();
  bool ok = s.size() >= normalized_shape.size();
  for (size_t i = 0; ok && i < normalized_shape.size(); i++)
    ok = mixin::s_eq(s[s.size() - normalized_shape.size() + i], normalized_shape[i]);
  if (!ok)
    throw Error("LayerNorm: last dimensions of " + mixin::shape_str(s) + " must match " +
                mixin::shape_str(normalized_shape));
  Tensor y = x.layernorm(AxisArg(axis), eps);
  if (!weight || !bias) return y;
  return y * *weight + *bias;
}

Tensor LayerNorm2d::operator()(const Tensor& x) const {
  return LayerNorm::operator()(x.permute({0, 2, 3, 1})).permute({0, 3, 1, 2});
}

RMSNorm::RMSNorm(int64_t dim, double eps, bool elementwise_affine) : eps(eps) {
  if (elementwise_affine) weight = Tensor::ones({dim});
}

Tensor RMSNorm::operator()(const Tensor& x) const {
  Tensor xf = x.float_();
  Tensor y = (xf * (xf.square().mean(-1, true) + eps).rsqrt()).cast(x.dtype());
  return weight ? y * *weight : y;
}

// ***** Embedding, LSTMCell *****

Embedding::Embedding(int64_t vocab_size, int64_t embed_size)
    : vocab_size(vocab_size), embed_size(embed_size),
      weight(Tensor::glorot_uniform(shape_of({vocab_size, embed_size}))) {}

Tensor Embedding::operator()(const Tensor& idx) const {
  if (!dtypes::is_int(idx.dtype()))
    throw Error("Expected integer dtype for index in embedding, got " + idx.dtype().repr());
  Tensor arange = Tensor::arange(PyConst((pyint)weight.shape()[0].i()));
  return (arange == idx.unsqueeze(-1)).unsqueeze(-1).where(weight, 0).sum(-2, false, weight.dtype());
}

LSTMCell::LSTMCell(int64_t input_size, int64_t hidden_size, bool bias) {
  double stdv = 1.0 / std::sqrt((double)hidden_size);
  weight_ih = Tensor::uniform(shape_of({hidden_size * 4, input_size}), -stdv, stdv);
  weight_hh = Tensor::uniform(shape_of({hidden_size * 4, hidden_size}), -stdv, stdv);
  if (bias) bias_ih = Tensor::zeros({hidden_size * 4}), bias_hh = Tensor::zeros({hidden_size * 4});
}

std::pair<Tensor, Tensor> LSTMCell::operator()(const Tensor& x, const std::optional<std::pair<Tensor, Tensor>>& hc_in) const {
  std::pair<Tensor, Tensor> hc;
  if (hc_in) {
    hc = *hc_in;
  } else {
    Tensor z = Tensor(UOp::zeros({x.shape()[0], weight_hh.shape()[1]}, x.dtype(), x.device(), false));
    hc = {z, z};
  }
  Tensor gates = x.linear(weight_ih.T(), bias_ih) + hc.first.linear(weight_hh.T(), bias_hh);
  std::vector<Tensor> ch = gates.chunk(4, 1);
  Tensor i = ch[0].sigmoid(), f = ch[1].sigmoid(), g = ch[2].tanh(), o = ch[3].sigmoid();
  Tensor new_c = f * hc.second + i * g;
  return {o * new_c.tanh(), new_c};
}

// ***** state dicts (attribute order of the reference's layers) *****

static void put(StateDict& sd, const char* name, const std::optional<Tensor>& t) {
  if (t) sd.emplace_back(name, *t);
}
StateDict BatchNorm::state_dict() const {
  StateDict sd;
  put(sd, "weight", weight), put(sd, "bias", bias), put(sd, "num_batches_tracked", num_batches_tracked);
  put(sd, "running_mean", running_mean), put(sd, "running_var", running_var);
  return sd;
}
StateDict Conv2d::state_dict() const {
  StateDict sd{{"weight", weight}};
  put(sd, "bias", bias);
  return sd;
}
StateDict ConvTranspose2d::state_dict() const { return Conv2d::state_dict(); }
StateDict Linear::state_dict() const {
  StateDict sd{{"weight", weight}};
  put(sd, "bias", bias);
  return sd;
}
StateDict GroupNorm::state_dict() const {
  StateDict sd;
  put(sd, "weight", weight), put(sd, "bias", bias);
  return sd;
}
StateDict InstanceNorm::state_dict() const {
  StateDict sd;
  put(sd, "weight", weight), put(sd, "bias", bias);
  return sd;
}
StateDict LayerNorm::state_dict() const {
  StateDict sd;
  put(sd, "weight", weight), put(sd, "bias", bias);
  return sd;
}
StateDict LayerNorm2d::state_dict() const { return LayerNorm::state_dict(); }
StateDict RMSNorm::state_dict() const {
  StateDict sd;
  put(sd, "weight", weight);
  return sd;
}
StateDict Embedding::state_dict() const { return {{"weight", weight}}; }
StateDict LSTMCell::state_dict() const {
  StateDict sd{{"weight_ih", weight_ih}, {"weight_hh", weight_hh}};
  put(sd, "bias_ih", bias_ih), put(sd, "bias_hh", bias_hh);
  return sd;
}

}  // namespace nn
}  // namespace tg
