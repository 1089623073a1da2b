// Port of tinygrad/tensor.py: the user-facing Tensor. A Tensor is a handle on a lazy UOp graph; copies of a Tensor
// share it (like python references), so realize(), assign() and the scheduler's rewrite of every live Tensor are seen
// by all copies. Every op is the UOp mixin's (lib/mixin): a Tensor method is _apply_uop of the UOp method, so both
// build the same graph.
//
//   tg::Tensor a = tg::Tensor::from_vector<float>({1, 2, 3, 4}).reshape({2, 2});
//   tg::Tensor b = (a.matmul(a) + 1).relu();
//   std::vector<float> v = b.to_vector<float>();     // realizes: schedule, codegen, compile, run on DEV (CPU default)
//   float s = b.sum().item<float>();
//
// Devices are registered by their backends (tg::cpu::register_device(), tg::interp::register_device()); DEV picks
// the default one (CPU, or INTERP for the interpreter).
#pragma once
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "lib/device.h"
#include "lib/helpers.h"
#include "lib/uop/uop.h"

namespace tg {

class Tensor;

extern ContextVar TRAINING;  // helpers.TRAINING (defined with the nn layers): dropout and BatchNorm follow it

// ***** callify (tensor.py transform_to_call) *****
struct CallifyResult {
  UOp call;                                     // SINK(assigns).call(*buffers)
  std::vector<std::pair<UOp, UOp>> buffer_map;  // original tensor node -> its storage after the call
};
// trace context "Callify N Buffers" with the steps "number the uops", "early transform tensor graph", "finalize call",
// "replace bufs"
CallifyResult transform_to_call(const UOp& big_sink);

// UOp helpers of uop/ops.py the Tensor needs (UOp.copy_to_device, clone, is_virtual, param_like, call, _frompy)
UOp uop_copy_to_device(const UOp& u, const Arg& device);
UOp uop_clone(const UOp& u, const Arg& device = {});
bool uop_is_virtual(const UOp& u);
UOp uop_param_like(const UOp& u, int64_t slot);
UOp uop_call(const UOp& body, std::span<const UOp> srcs, std::optional<std::string> name = std::nullopt);
// mixin/op.py _getitem(indices, v) (in lib/mixin/op.cpp): self with the elements `indices` select replaced by v
UOp uop_getitem_set(const UOp& self, const std::vector<Index>& indices, const UOp& v);
// a PYTHON-device buffer holding `data` (host bytes of `dtype`), reshaped to shape and copied to `device`
UOp uop_frompy(const std::vector<uint8_t>& data, const Shape& shape, DType dtype, const Arg& device = {});

// a Tensor or a python scalar: the operand of the elementwise methods
class TOperand {
 public:
  TOperand(const Tensor& t);
  TOperand(PyConst c) : c_(c) {}
  TOperand(int v) : c_(v) {}
  TOperand(long v) : c_(v) {}
  TOperand(long long v) : c_(v) {}
  TOperand(unsigned long v) : c_(v) {}
  TOperand(pyint v) : c_(v) {}
  TOperand(double v) : c_(v) {}
  TOperand(float v) : c_((double)v) {}
  TOperand(bool v) : c_(v) {}
  Operand op() const { return u_ ? Operand(u_) : Operand(c_); }
  bool is_uop() const { return (bool)u_; }
  const UOp& uop() const { return u_; }
  const PyConst& value() const { return c_; }

 private:
  PyConst c_;
  UOp u_;
};

// nested initializer lists of scalars: Tensor({{1, 2}, {3, 4}})
template <typename T>
struct NestedList {
  NestedList(T v) : leaf(v), is_leaf(true) {}  // NOLINT
  NestedList(std::initializer_list<NestedList<T>> l) : items(l) {}
  T leaf{};
  bool is_leaf = false;
  std::vector<NestedList<T>> items;
};

template <>
struct MixinTypes<Tensor> {
  using operand = TOperand;
};

class Tensor : public ElementwiseMixin<Tensor> {
 public:
  // ***** construction *****
  Tensor();  // Tensor(None): a 0.0 const
  explicit Tensor(const UOp& u, const Arg& device = {}, DType dtype = DType());
  Tensor(double v, DType dtype = DType(), const Arg& device = {});  // a python scalar: a const (virtual) tensor
  Tensor(int v, DType dtype = DType(), const Arg& device = {});
  Tensor(long v, DType dtype = DType(), const Arg& device = {});
  Tensor(bool v, DType dtype = DType(), const Arg& device = {});
  // a list: host data in a PYTHON buffer copied to the device (the dtype defaults like dtypes.from_py)
  Tensor(NestedList<double> data, DType dtype = DType(), const Arg& device = {});
  Tensor(std::initializer_list<NestedList<double>> data, DType dtype = DType(), const Arg& device = {})
      : Tensor(NestedList<double>(data), dtype, device) {}
  template <typename V>
  static Tensor from_vector(const std::vector<V>& data, DType dtype = DType(), const Arg& device = {});
  static Tensor from_values(const std::vector<PyConst>& data, const Shape& shape, DType dtype, const Arg& device = {});
  static Tensor from_bytes(const std::vector<uint8_t>& data, DType dtype = DType(), const Arg& device = {});
  static Tensor const_(PyConst b, DType dtype = DType()) { return Tensor(UOp::const_(b, dtype)); }

  static Tensor empty(const Shape& shape, DType dtype = DType(), const Arg& device = {});
  static Tensor zeros(const Shape& shape, DType dtype = DType(), const Arg& device = {});
  static Tensor ones(const Shape& shape, DType dtype = DType(), const Arg& device = {});
  static Tensor full(const Shape& shape, const TOperand& fill_value, DType dtype = DType(), const Arg& device = {});
  static Tensor arange(PyConst start, std::optional<PyConst> stop = std::nullopt, PyConst step = 1,
                       DType dtype = DType());
  static Tensor linspace(PyConst start, PyConst stop, int64_t steps, DType dtype = DType());
  static Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, DType dtype = DType());
  static Tensor stack(const std::vector<Tensor>& ts, int64_t dim = 0);
  Tensor zeros_like(DType dtype = DType()) const;
  Tensor ones_like(DType dtype = DType()) const;
  Tensor full_like(PyConst v, DType dtype = DType()) const;
  Tensor empty_like(DType dtype = DType()) const;

  // ***** random (mixin/rand.py, lib/mixin/rand.cpp) *****
  static void manual_seed(int64_t seed = 0);
  static Tensor rand(const Shape& shape, DType dtype = DType(), const Arg& device = {}, bool contiguous = true);
  static Tensor randn(const Shape& shape, DType dtype = DType(), const Arg& device = {});
  static Tensor randint(const Shape& shape, pyint low = 0, pyint high = 10, DType dtype = DType(),
                        const Arg& device = {});
  static Tensor uniform(const Shape& shape, PyConst low = 0.0, PyConst high = 1.0, DType dtype = DType(),
                        const Arg& device = {});
  static Tensor normal(const Shape& shape, double mean = 0.0, double std = 1.0, DType dtype = DType(),
                       const Arg& device = {});
  static Tensor scaled_uniform(const Shape& shape, DType dtype = DType(), const Arg& device = {});
  static Tensor glorot_uniform(const Shape& shape, DType dtype = DType(), const Arg& device = {});
  Tensor rand_like(DType dtype = DType()) const;
  Tensor randn_like(DType dtype = DType()) const;
  static std::pair<Tensor, Tensor> next_counter(const std::string& device, pyint num);  // _next_counter

  // ***** the graph *****
  const UOp& uop() const { return d_->uop; }
  void set_uop(const UOp& u) { d_->uop = u; }
  Arg device() const { return uop().device(); }
  std::string device_str() const;  // the device name (throws for no device / multi device)
  const Shape& shape() const { return uop().shape(); }
  DType dtype() const { return uop().dtype(); }
  int64_t ndim() const { return uop().ndim(); }
  sint numel() const { return uop().numel(); }
  bool is(const Tensor& o) const { return d_ == o.d_; }
  std::string repr() const;
  Tensor apply(const std::function<UOp(const UOp&)>& f) const { return Tensor::wrap(f(uop())); }  // _apply_uop

  // ***** what the op mixins (lib/mixin) require: the graph, and alu/const_like/ufix through it *****
  const UOp& _uop() const { return uop(); }
  static Tensor _wrap_uop(const UOp& u) { return wrap(u); }
  Tensor alu(Ops op) const { return wrap(uop().alu(op)); }
  Tensor alu(Ops op, const Tensor& a) const { return wrap(uop().alu(op, a.uop())); }
  Tensor alu(Ops op, const Tensor& a, const Tensor& b) const { return wrap(uop().alu(op, a.uop(), b.uop())); }
  Tensor const_like(PyConst b, DType dtype = DType()) const { return wrap(uop().const_like(b, dtype)); }
  Tensor ufix(const TOperand& x) const { return wrap(x.is_uop() ? x.uop() : uop().ufix(x.value())); }

  // ***** realize / schedule (the engine) *****
  static CallifyResult callify_sink(const std::vector<Tensor>& ts);  // transform_to_call + apply the map
  Tensor& callify(const std::vector<Tensor>& more = {});
  // the LINEAR and var_vals that realize these tensors (rewrites every live tensor onto the result buffers)
  static std::pair<UOp, std::map<std::string, pyint>> linear_with_vars(const std::vector<Tensor>& ts);
  static UOp schedule_linear(const std::vector<Tensor>& ts);
  Tensor& realize(const std::vector<Tensor>& more = {}, bool do_update_stats = true);
  static void realize_all(const std::vector<Tensor>& ts, bool do_update_stats = true);
  Tensor& replace(const Tensor& x);
  Tensor& assign(const Tensor& x);
  Tensor& assign(const TOperand& x);
  Tensor clone(const Arg& device = {}) const;
  Tensor to(const Arg& device) const;
  bool is_realized() const { return uop_is_realized(uop()); }

  // ***** data *****
  std::shared_ptr<Buffer> buffer() const;    // _buffer: realized contiguous buffer of this tensor
  std::vector<uint8_t> data() const;         // raw bytes in this tensor's (strong) dtype, row major
  std::vector<PyConst> tolist_flat() const;  // python values, row major
  template <typename V>
  std::vector<V> to_vector() const;
  template <typename V>
  V item() const;

  // ***** movement (mixin/movement.py) *****
  Tensor reshape(const Shape& s) const {
    return apply([&](const UOp& u) { return u.reshape(s); });
  }
  Tensor view(const Shape& s) const { return reshape(s); }
  Tensor expand(const OptShape& s) const {
    return apply([&](const UOp& u) { return u.expand(s); });
  }
  Tensor permute(const std::vector<int64_t>& o) const {
    return apply([&](const UOp& u) { return u.permute(o); });
  }
  Tensor flip(const std::vector<int64_t>& a) const {
    return apply([&](const UOp& u) { return u.flip(a); });
  }
  Tensor flip(int64_t a) const { return flip(std::vector<int64_t>{a}); }
  Tensor shrink(const PadArg& a) const {
    return apply([&](const UOp& u) { return u.shrink(a); });
  }
  Tensor pad(const PadArg& p, std::string_view mode = "constant", PyConst value = 0.0) const {
    return apply([&](const UOp& u) { return u.pad(p, mode, value); });
  }
  Tensor pad_to(const OptShape& s, PyConst value = 0) const {
    return apply([&](const UOp& u) { return u.pad_to(s, value); });
  }
  Tensor shrink_to(const OptShape& s) const {
    return apply([&](const UOp& u) { return u.shrink_to(s); });
  }
  Tensor squeeze(std::optional<int64_t> d = std::nullopt) const {
    return apply([&](const UOp& u) { return u.squeeze(d); });
  }
  Tensor unsqueeze(int64_t d) const {
    return apply([&](const UOp& u) { return u.unsqueeze(d); });
  }
  Tensor T() const { return transpose(); }
  Tensor transpose(int64_t d0 = 1, int64_t d1 = 0) const {
    return apply([&](const UOp& u) { return u.transpose(d0, d1); });
  }
  Tensor flatten(int64_t s = 0, int64_t e = -1) const {
    return apply([&](const UOp& u) { return u.flatten(s, e); });
  }
  Tensor unflatten(int64_t d, const Shape& s) const {
    return apply([&](const UOp& u) { return u.unflatten(d, s); });
  }
  Tensor broadcast_to(const Shape& s) const {
    return apply([&](const UOp& u) { return u.broadcast_to(s); });
  }
  Tensor repeat(const std::vector<sint>& r) const {
    return apply([&](const UOp& u) { return u.repeat(r); });
  }
  Tensor rearrange(const std::string& f, const std::vector<std::pair<std::string, int64_t>>& s = {}) const {
    return apply([&](const UOp& u) { return u.rearrange(f, s); });
  }
  Tensor roll(const std::vector<int64_t>& shifts,
              const std::optional<std::vector<int64_t>>& dims = std::nullopt) const {
    return apply([&](const UOp& u) { return u.roll(shifts, dims); });
  }
  Tensor getitem(const std::vector<Index>& idx) const;  // __getitem__ (a Tensor index goes as Index(t.uop()))
  Tensor operator[](const std::vector<Index>& idx) const { return getitem(idx); }
  Tensor operator[](int64_t i) const { return getitem({Index((long long)i)}); }
  // __setitem__: t[indices] = v. A realized tensor is written in place (basic indices: assign into the view;
  // tensor indices: assign the merged value); an unrealized float tensor (or any unrealized tensor with basic
  // indices) is replaced by its _getitem(indices, v) form. v must have self's dtype (weak scalars are cast).
  // Errors like the reference's: a weak self, a dtype mismatch, a tensor whose graph other live tensors still use.
  void setitem(const std::vector<Index>& indices, const TOperand& v);
  void setitem(const Tensor& index, const TOperand& v) { setitem({Index(index.uop())}, v); }
  void setitem(int64_t i, const TOperand& v) { setitem({Index((long long)i)}, v); }
  // __iadd__ and friends: self.assign(self op x), so a view of a realized buffer writes into the buffer
  Tensor& operator+=(const TOperand& x) { return assign(add(x)); }
  Tensor& operator-=(const TOperand& x) { return assign(sub(x)); }
  Tensor& operator*=(const TOperand& x) { return assign(mul(x)); }
  Tensor& operator/=(const TOperand& x) { return assign(div(x)); }
  Tensor cat(const std::vector<Tensor>& others, int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t size, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;

  // ***** reduce (mixin/reduce.py, op.py) *****
  Tensor sum(const AxisArg& a = AxisArg(), bool keepdim = false, DType dt = DType()) const {
    return apply([&](const UOp& u) { return u.sum(a, keepdim, dt); });
  }
  Tensor prod(const AxisArg& a = AxisArg(), bool keepdim = false, DType dt = DType()) const {
    return apply([&](const UOp& u) { return u.prod(a, keepdim, dt); });
  }
  Tensor max(const AxisArg& a = AxisArg(), bool keepdim = false) const {
    return apply([&](const UOp& u) { return u.max(a, keepdim); });
  }
  Tensor min(const AxisArg& a = AxisArg(), bool keepdim = false) const {
    return apply([&](const UOp& u) { return u.min(a, keepdim); });
  }
  Tensor any(const AxisArg& a = AxisArg(), bool keepdim = false) const {
    return apply([&](const UOp& u) { return u.any(a, keepdim); });
  }
  Tensor all(const AxisArg& a = AxisArg(), bool keepdim = false) const {
    return apply([&](const UOp& u) { return u.all(a, keepdim); });
  }
  Tensor mean(const AxisArg& a = AxisArg(), bool keepdim = false) const {
    return apply([&](const UOp& u) { return u.mean(a, keepdim); });
  }
  Tensor var(const AxisArg& a = AxisArg(), bool keepdim = false, PyConst correction = 1) const {
    return apply([&](const UOp& u) { return u.var(a, keepdim, correction); });
  }
  Tensor std(const AxisArg& a = AxisArg(), bool keepdim = false, PyConst correction = 1) const {
    return apply([&](const UOp& u) { return u.std_(a, keepdim, correction); });
  }
  Tensor argmax(std::optional<int64_t> a = std::nullopt, bool keepdim = false) const {
    return apply([&](const UOp& u) { return u.argmax(a, keepdim); });
  }
  Tensor argmin(std::optional<int64_t> a = std::nullopt, bool keepdim = false) const {
    return apply([&](const UOp& u) { return u.argmin(a, keepdim); });
  }
  Tensor softmax(int64_t a = -1, DType dt = DType()) const {
    return apply([&](const UOp& u) { return u.softmax(a, dt); });
  }
  Tensor log_softmax(int64_t a = -1, DType dt = DType()) const {
    return apply([&](const UOp& u) { return u.log_softmax(a, dt); });
  }
  Tensor logsumexp(const AxisArg& a = AxisArg(), bool keepdim = false) const {
    return apply([&](const UOp& u) { return u.logsumexp(a, keepdim); });
  }
  Tensor cumsum(int64_t a = 0) const {
    return apply([&](const UOp& u) { return u.cumsum(a); });
  }
  Tensor cumprod(int64_t a) const {
    return apply([&](const UOp& u) { return u.cumprod(a); });
  }

  // ***** linear algebra, nn (op.py) *****
  Tensor dot(const Tensor& w, DType dt = DType()) const;
  Tensor matmul(const Tensor& x, DType dt = DType()) const;
  Tensor linear(const Tensor& w, const std::optional<Tensor>& b = std::nullopt) const;
  Tensor conv2d(const Tensor& w, const std::optional<Tensor>& b = std::nullopt, int64_t groups = 1,
                const IntTuple& stride = 1, const IntTuple& dilation = 1, const IntTuple& padding = 0) const;
  Tensor max_pool2d(const IntTuple& k = {2, 2}, const std::optional<IntTuple>& stride = std::nullopt,
                    const IntTuple& dilation = 1, const IntTuple& padding = 0) const {
    return apply([&](const UOp& u) { return u.max_pool2d(k, stride, dilation, padding); });
  }
  Tensor avg_pool2d(const IntTuple& k = {2, 2}, const std::optional<IntTuple>& stride = std::nullopt) const {
    return apply([&](const UOp& u) { return u.avg_pool2d(k, stride); });
  }
  Tensor layernorm(const AxisArg& a = -1, double eps = 1e-5) const {
    return apply([&](const UOp& u) { return u.layernorm(a, eps); });
  }
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor one_hot(int64_t n) const {
    return apply([&](const UOp& u) { return u.one_hot(n); });
  }
  Tensor triu(int64_t d = 0) const {
    return apply([&](const UOp& u) { return u.triu(d); });
  }
  Tensor tril(int64_t d = 0) const {
    return apply([&](const UOp& u) { return u.tril(d); });
  }
  Tensor sparse_categorical_crossentropy(const Tensor& Y, int64_t ignore_index = -1, double label_smoothing = 0.0,
                                         std::string_view reduction = "mean") const;
  Tensor cross_entropy(const Tensor& Y, std::string_view reduction = "mean", double label_smoothing = 0.0) const;
  std::pair<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const;
  std::pair<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted_ = true) const;

  // ***** more of the mixins (op.py, movement.py, elementwise.py) *****
  Tensor getitem(const Tensor& index) const { return getitem({Index(index.uop())}); }
  Tensor pad_flat(const std::vector<sint>& p, std::string_view mode = "constant", PyConst value = 0.0) const {
    return apply([&](const UOp& u) { return u.pad_flat(p, mode, value); });
  }
  Tensor unfold(int64_t dim, int64_t size, int64_t step) const {
    return apply([&](const UOp& u) { return u.unfold(dim, size, step); });
  }
  Tensor diag() const {
    return apply([](const UOp& u) { return u.diag(); });
  }
  Tensor diagonal(int64_t offset = 0, int64_t d1 = 0, int64_t d2 = 1) const {
    return apply([&](const UOp& u) { return u.diagonal(offset, d1, d2); });
  }
  Tensor repeat_interleave(int64_t r, std::optional<int64_t> dim = std::nullopt) const {
    return apply([&](const UOp& u) { return u.repeat_interleave(r, dim); });
  }
  Tensor softmin(int64_t a = -1) const {
    return apply([&](const UOp& u) { return u.softmin(a); });
  }
  Tensor normalize(double p = 2.0, int64_t dim = 1, double eps = 1e-12) const {
    return apply([&](const UOp& u) { return u.normalize(p, dim, eps); });
  }
  Tensor logcumsumexp(int64_t a = 0) const {
    return apply([&](const UOp& u) { return u.logcumsumexp(a); });
  }
  std::pair<Tensor, Tensor> cummax(int64_t a = 0) const {
    auto [v, i] = uop().cummax(a);
    return {wrap(v), wrap(i)};
  }
  std::pair<Tensor, Tensor> var_mean(const AxisArg& a = AxisArg(), bool keepdim = false, PyConst corr = 1) const {
    auto [v, m] = uop().var_mean(a, keepdim, corr);
    return {wrap(v), wrap(m)};
  }
  Tensor argsort(int64_t dim = -1, bool descending = false) const {
    return apply([&](const UOp& u) { return u.argsort(dim, descending); });
  }
  Tensor allclose(const Tensor& x, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) const {
    return wrap(uop().allclose(x.uop(), rtol, atol, equal_nan));
  }
  Tensor scatter(int64_t dim, const Tensor& index, const TOperand& src, std::string_view reduce = {}) const {
    return wrap(uop().scatter(dim, index.uop(), src.op(), reduce));
  }
  Tensor scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                        bool include_self = true) const {
    return wrap(uop().scatter_reduce(dim, index.uop(), src.uop(), reduce, include_self));
  }
  Tensor masked_select(const Tensor& mask, int64_t size, PyConst fill = 0) const {
    return wrap(uop().masked_select(mask.uop(), size, fill));
  }
  Tensor nonzero(int64_t size, PyConst fill = 0) const {
    return apply([&](const UOp& u) { return u.nonzero(size, fill); });
  }
  Tensor interpolate(const std::vector<int64_t>& size, std::string_view mode = "linear",
                     bool align_corners = false) const {
    return apply([&](const UOp& u) { return u.interpolate(size, mode, align_corners); });
  }
  Tensor conv_transpose2d(const Tensor& w, const std::optional<Tensor>& b = std::nullopt, int64_t groups = 1,
                          const IntTuple& stride = 1, const IntTuple& dilation = 1, const IntTuple& padding = 0,
                          const IntTuple& output_padding = 0) const {
    return wrap(uop().conv_transpose2d(w.uop(), b ? std::optional<UOp>(b->uop()) : std::nullopt, groups, stride,
                                       dilation, padding, output_padding));
  }
  Tensor batchnorm(const std::optional<Tensor>& w, const std::optional<Tensor>& b, const Tensor& mean,
                   const Tensor& invstd, const AxisArg& axis = 1) const {
    return wrap(uop().batchnorm(w ? std::optional<UOp>(w->uop()) : std::nullopt,
                                b ? std::optional<UOp>(b->uop()) : std::nullopt, mean.uop(), invstd.uop(), axis));
  }
  Tensor binary_crossentropy(const Tensor& Y, std::string_view reduction = "mean") const {
    return wrap(uop().binary_crossentropy(Y.uop(), reduction));
  }
  Tensor binary_crossentropy_logits(const Tensor& Y, std::string_view reduction = "mean") const {
    return wrap(uop().binary_crossentropy_logits(Y.uop(), reduction));
  }
  Tensor nll_loss(const Tensor& Y, std::string_view reduction = "mean") const {
    return wrap(uop().nll_loss(Y.uop(), std::nullopt, std::nullopt, reduction));
  }
  static Tensor einsum(const std::string& formula, const std::vector<Tensor>& operands, DType dt = DType()) {
    std::vector<UOp> u;
    for (const Tensor& t : operands) u.push_back(t.uop());
    return wrap(UOp::einsum(formula, u, dt));
  }

  // ***** autograd (tensor.py backward, OpMixin.gradient) *****
  std::optional<Tensor> grad() const;
  void set_grad(const std::optional<Tensor>& g);
  // requires_grad is an opt-out (the reference has none: backward() gives .grad to every float tensor of the graph).
  // A tensor marked false gets no .grad from backward(), and gradient() w.r.t. it throws; gradients still flow
  // through it to the tensors it was computed from (use detach() to stop them).
  bool requires_grad() const { return d_->requires_grad && is_floating_point(); }
  Tensor& requires_grad_(bool v = true) {
    d_->requires_grad = v;
    return *this;
  }
  // training mode: TRAINING=mode (the ContextVar dropout and BatchNorm read) until the guard goes out of scope.
  //   { auto g = Tensor::train(); loss = model(x).dropout(0.1)...; }   // TRAINING restored here
  class TrainGuard {
   public:
    explicit TrainGuard(bool mode);
    ~TrainGuard();
    TrainGuard(const TrainGuard&) = delete;
    TrainGuard& operator=(const TrainGuard&) = delete;

   private:
    int64_t old_;
  };
  [[nodiscard]] static TrainGuard train(bool mode = true) { return TrainGuard(mode); }
  static bool training();  // TRAINING is set
  // mixin/rand.py dropout: zeroes elements with probability p and scales the rest by 1/(1-p), only when training
  Tensor dropout(double p = 0.5) const;
  bool is_param() const { return d_->is_param; }
  Tensor& is_param_(bool v = true) {
    d_->is_param = v;
    return *this;
  }
  // d(self)/d(target) for each target; without `grad_output` self must be a scalar
  std::vector<Tensor> gradient(const std::vector<Tensor>& targets,
                               const std::optional<Tensor>& grad_output = std::nullopt) const;
  // fills .grad of every live float tensor with a device that self's graph uses (accumulating into an existing .grad)
  Tensor& backward(const std::optional<Tensor>& grad_output = std::nullopt);

  // internal: wrap a UOp into a new registered Tensor without device/dtype handling (_apply_uop's constructor)
  static Tensor wrap(const UOp& u);
  // all live tensors (all_tensors), for _apply_map_to_tensors
  static std::vector<Tensor> live_tensors();
  static size_t live_tensor_count();

  struct Data {
    UOp uop;
    std::shared_ptr<Data> grad;  // .grad, filled by backward()
    bool is_param = true;        // optimizers update params; other tensors they get (BatchNorm statistics) are buffers
    bool requires_grad = true;   // false: opted out of backward() and gradient()
  };

 private:
  explicit Tensor(std::shared_ptr<Data> d) : d_(std::move(d)) {}
  Tensor bin(const std::function<UOp(const UOp&, const Operand&)>& f, const TOperand& x) const {
    return Tensor::wrap(f(uop(), x.op()));
  }
  void init_from(const UOp& data, const Arg& device, DType dtype);
  std::shared_ptr<Data> d_;
};

// _apply_map_to_tensors: every live Tensor whose graph reaches a key gets the substituted graph
void apply_map_to_tensors(const std::vector<std::pair<UOp, UOp>>& applied_map, const std::string& name);

// C++ operators: python semantics (broadcasting, promotion, weak scalars)
Tensor operator+(const Tensor& a, const TOperand& b);
Tensor operator-(const Tensor& a, const TOperand& b);
Tensor operator*(const Tensor& a, const TOperand& b);
Tensor operator/(const Tensor& a, const TOperand& b);
Tensor operator%(const Tensor& a, const TOperand& b);
Tensor operator&(const Tensor& a, const TOperand& b);
Tensor operator|(const Tensor& a, const TOperand& b);
Tensor operator^(const Tensor& a, const TOperand& b);
Tensor operator<<(const Tensor& a, const TOperand& b);
Tensor operator>>(const Tensor& a, const TOperand& b);
Tensor operator<(const Tensor& a, const TOperand& b);
Tensor operator>(const Tensor& a, const TOperand& b);
Tensor operator<=(const Tensor& a, const TOperand& b);
Tensor operator>=(const Tensor& a, const TOperand& b);
Tensor operator==(const Tensor& a, const TOperand& b);
Tensor operator!=(const Tensor& a, const TOperand& b);
Tensor operator-(const Tensor& a);
Tensor operator~(const Tensor& a);
// a python scalar on the left: the reflected op (1 - t == t.sub(1, reverse=True))
Tensor operator+(PyConst a, const Tensor& b);
Tensor operator-(PyConst a, const Tensor& b);
Tensor operator*(PyConst a, const Tensor& b);
Tensor operator/(PyConst a, const Tensor& b);

// ***** data conversion *****
// one element of `dt` at p as a python value (int, float or bool)
PyConst load_host_scalar(const uint8_t* p, DType dt);
void store_host_scalar(uint8_t* p, DType dt, const PyConst& v);

template <typename V>
Tensor Tensor::from_vector(const std::vector<V>& data, DType dtype, const Arg& device) {
  std::vector<PyConst> v;
  v.reserve(data.size());
  for (const V& x : data) {
    if constexpr (std::is_same_v<V, bool>)
      v.emplace_back((bool)x);
    else if constexpr (std::is_floating_point_v<V>)
      v.emplace_back((double)x);
    else
      v.emplace_back((pyint)x);
  }
  DType dt = dtype;
  if (!dt) {
    if constexpr (std::is_same_v<V, bool>)
      dt = dtypes::bool_;
    else if constexpr (std::is_same_v<V, float>)
      dt = dtypes::float32;
    else if constexpr (std::is_same_v<V, double>)
      dt = dtypes::float64;
    else if constexpr (std::is_same_v<V, int8_t>)
      dt = dtypes::int8;
    else if constexpr (std::is_same_v<V, uint8_t>)
      dt = dtypes::uint8;
    else if constexpr (std::is_same_v<V, int16_t>)
      dt = dtypes::int16;
    else if constexpr (std::is_same_v<V, uint16_t>)
      dt = dtypes::uint16;
    else if constexpr (std::is_same_v<V, int32_t>)
      dt = dtypes::int32;
    else if constexpr (std::is_same_v<V, uint32_t>)
      dt = dtypes::uint32;
    else if constexpr (std::is_same_v<V, uint64_t>)
      dt = dtypes::uint64;
    else
      dt = dtypes::int64;
  }
  return from_values(v, Shape{sint((pyint)data.size())}, dt, device);
}

template <typename V>
std::vector<V> Tensor::to_vector() const {
  std::vector<PyConst> vals = tolist_flat();
  std::vector<V> out;
  out.reserve(vals.size());
  for (const PyConst& v : vals) {
    if constexpr (std::is_same_v<V, bool>)
      out.push_back(v.truthy());
    else if constexpr (std::is_floating_point_v<V>)
      out.push_back((V)(v.is_float() ? v.as_float() : (double)v.as_int()));
    else
      out.push_back((V)(v.is_float() ? (pyint)v.as_float() : v.as_int()));
  }
  return out;
}

template <typename V>
V Tensor::item() const {
  sint n = numel();
  if (!n.is_int() || n.i() != 1) throw Error("item() needs a tensor with one element, got shape of " + repr());
  return to_vector<V>().at(0);
}

}  // namespace tg
