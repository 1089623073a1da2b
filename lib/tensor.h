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
  TOperand(const sint& s);  // python int|UOp
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

class Tensor : public RandMixin<Tensor> {
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


  // ***** random: the per-device RNG state of tensor.py (the random ops are RandMixin's, lib/mixin/rand.cpp) *****
  static void manual_seed(int64_t seed = 0);
  static std::pair<Tensor, Tensor> next_counter(const std::string& device, pyint num);  // _next_counter

  // ***** the graph *****
  const UOp& uop() const { return d_->uop; }
  void set_uop(const UOp& u) { d_->uop = u; }
  Arg device() const { return uop().device(); }
  std::string device_str() const;  // the device name (throws for no device / multi device)
  const Shape& shape() const { return uop().shape(); }
  DType dtype() const { return uop().dtype(); }
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
  Tensor mop(Ops op, const Shape& arg) const { return wrap(uop().mop(op, arg)); }
  Tensor mop(Ops op, const std::vector<std::pair<sint, sint>>& arg) const { return wrap(uop().mop(op, arg)); }
  Tensor mop(Ops op, Arg arg) const { return wrap(uop().mop(op, std::move(arg))); }
  Tensor rop(Ops op, std::vector<int64_t> axis) const { return wrap(uop().rop(op, std::move(axis))); }
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

  // ***** setitem and in-place operators (every other op is inherited from the mixins) *****
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
