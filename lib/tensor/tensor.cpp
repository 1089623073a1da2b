// Port of tinygrad/tensor.py: the Tensor handle, the all_tensors registry, construction from host data, realize /
// linear_with_vars / assign / replace, data access. Callify is in callify.cpp, random numbers in
// mixin/rand.cpp.
#include "lib/tensor.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "lib/engine/realize.h"
#include "lib/mixin/gradient.h"
#include "lib/schedule/schedule.h"
#include "lib/uop/rewrite.h"

namespace tg {

// ***** all_tensors *****

namespace {
struct Registry {
  std::mutex mu;
  std::vector<std::weak_ptr<Tensor::Data>> live;
  size_t since_compact = 0;
};
Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}
void register_data(const std::shared_ptr<Tensor::Data>& d) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  r.live.push_back(d);
  if (++r.since_compact > 1024 && r.since_compact > r.live.size() / 2) {
    std::erase_if(r.live, [](const std::weak_ptr<Tensor::Data>& w) { return w.expired(); });
    r.since_compact = 0;
  }
}

std::string arg_device_str(const Arg& d) {
  if (d.is_str()) return d.as_str();
  if (d.is_none()) return "None";
  return d.repr();
}
}  // namespace

std::vector<Tensor> Tensor::live_tensors() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  std::vector<Tensor> out;
  std::vector<std::weak_ptr<Data>> keep;
  for (auto& w : r.live)
    if (auto s = w.lock()) out.push_back(Tensor(s)), keep.push_back(w);
  r.live = std::move(keep);
  r.since_compact = 0;
  return out;
}

size_t Tensor::live_tensor_count() { return live_tensors().size(); }

// ***** autograd *****

std::optional<Tensor> Tensor::grad() const {
  if (!d_->grad) return std::nullopt;
  return Tensor(d_->grad);
}

void Tensor::set_grad(const std::optional<Tensor>& g) { d_->grad = g ? g->d_ : nullptr; }

std::vector<Tensor> Tensor::gradient(const std::vector<Tensor>& targets,
                                     const std::optional<Tensor>& grad_output) const {
  std::vector<UOp> ts;
  for (size_t i = 0; i < targets.size(); i++) {
    if (!targets[i].d_->requires_grad)
      throw Error("gradient: target " + std::to_string(i) + " " + targets[i].repr() +
                  " has requires_grad=false; call requires_grad_(true) to differentiate w.r.t. it");
    ts.push_back(targets[i].uop());
  }
  std::vector<Tensor> out;
  for (const UOp& g : ::tg::gradient(uop(), ts, grad_output ? grad_output->uop() : UOp())) out.push_back(wrap(g));
  return out;
}

Tensor& Tensor::backward(const std::optional<Tensor>& grad_output) {
  std::vector<UOp> topo = uop().toposort();
  UOpSet in_graph(topo.begin(), topo.end());
  std::vector<Tensor> need;
  for (const Tensor& t : live_tensors())
    if (in_graph.count(t.uop()) && t.is_floating_point() && !t.device().is_none() && t.d_->requires_grad)
      need.push_back(t);
  std::vector<Tensor> grads = gradient(need, grad_output);
  for (size_t i = 0; i < need.size(); i++) {
    Tensor& t = need[i];
    Tensor g = grads[i];
    if (!shape_eq(g.shape(), t.shape()))
      throw Error("backward: grad shape must match tensor shape, " + g.repr() + " != " + t.repr());
    if (g.device().is_none()) g = g.clone(t.device());
    if (std::optional<Tensor> old = t.grad())
      old->assign(*old + g.to(old->device()));
    else
      t.set_grad(g);
  }
  return *this;
}

Tensor Tensor::wrap(const UOp& u) {
  auto d = std::make_shared<Data>();
  d->uop = u;
  register_data(d);
  return Tensor(d);
}

void apply_map_to_tensors(const std::vector<std::pair<UOp, UOp>>& applied_map, const std::string& name) {
  if (applied_map.empty()) return;
  UOpSet keys;
  for (const auto& [k, v] : applied_map) keys.insert(k);
  // get tensors in scope: their graph reaches a key
  UOpMap<bool> in_scope;
  auto reaches = [&](const UOp& root) {
    for (const UOp& n : root.toposort([&](const UOp& x) { return !in_scope.count(x); })) {
      bool r = keys.count(n) > 0;
      for (const UOp& s : n.src())
        if (!r) {
          auto it = in_scope.find(s);
          r = it != in_scope.end() && it->second;
        }
      in_scope[n] = r;
    }
    return in_scope[root];
  };
  std::vector<Tensor> scope;
  std::vector<UOp> srcs;
  for (Tensor& t : Tensor::live_tensors())
    if (reaches(t.uop())) scope.push_back(t), srcs.push_back(t.uop());
  if (scope.empty()) return;
  // apply the map. always walk: replace exactly the nodes the map names, values are final
  UOp sink = UOp::sink(srcs);
  std::string step = "substitute " + name;
  UOp new_sink = sink.substitute(applied_map, step.c_str(), true);
  for (size_t i = 0; i < scope.size(); i++)
    if (!(new_sink.src(i) == sink.src(i))) scope[i].set_uop(new_sink.src(i));
}

// ***** construction *****

TOperand::TOperand(const Tensor& t) : u_(t.uop()) {}
TOperand::TOperand(const sint& s) : c_(s.is_int() ? PyConst(s.i()) : PyConst()), u_(s.is_int() ? UOp() : s.u()) {}

void Tensor::init_from(const UOp& data, const Arg& device_arg, DType dtype) {
  Arg device = device_arg;
  if (device.is_none()) device = data.device();
  if (device.is_none())
    device = Arg(default_device());
  else if (device.is_str())
    device = Arg(canonicalize_device(device.as_str()));
  UOp u = data;
  Arg ddev = data.device();
  if (!ddev.is_none() && !(ddev.is_str() && device.is_str() && ddev.as_str() == device.as_str()))
    u = uop_copy_to_device(u, device);
  // cast on the target device, the source may not hold the dtype or be able to compute it
  if (dtype) u = u.cast(dtype);
  d_ = std::make_shared<Data>();
  d_->uop = u;
  register_data(d_);
}

Tensor::Tensor() { init_from(UOp::const_(PyConst(0.0)), Arg(), DType()); }
Tensor::Tensor(const UOp& u, const Arg& device, DType dtype) { init_from(u, device, dtype); }
Tensor::Tensor(double v, DType dtype, const Arg& device) { init_from(UOp::const_(PyConst(v), dtype), device, dtype); }
Tensor::Tensor(int v, DType dtype, const Arg& device) { init_from(UOp::const_(PyConst(v), dtype), device, dtype); }
Tensor::Tensor(long v, DType dtype, const Arg& device) { init_from(UOp::const_(PyConst(v), dtype), device, dtype); }
Tensor::Tensor(bool v, DType dtype, const Arg& device) { init_from(UOp::const_(PyConst(v), dtype), device, dtype); }

namespace {
void flatten_nested(const NestedList<double>& l, std::vector<double>& out, std::vector<int64_t>& shape, size_t depth) {
  if (l.is_leaf) {
    if (depth < shape.size()) throw Error("Tensor: inhomogeneous nested list");
    out.push_back(l.leaf);
    return;
  }
  if (depth == shape.size())
    shape.push_back((int64_t)l.items.size());
  else if (shape[depth] != (int64_t)l.items.size())
    throw Error("Tensor: inhomogeneous nested list");
  for (const auto& x : l.items) flatten_nested(x, out, shape, depth + 1);
}
}  // namespace

Tensor::Tensor(NestedList<double> data, DType dtype, const Arg& device) {
  std::vector<double> flat;
  std::vector<int64_t> shape;
  flatten_nested(data, flat, shape, 0);
  std::vector<PyConst> vals;
  for (double v : flat) vals.push_back(PyConst(v));
  Shape s;
  for (int64_t d : shape) s.push_back(sint((pyint)d));
  // a list of C++ doubles: default_float unless a dtype is given (from_vector keeps integer types)
  DType dt = dtype ? dtype : dtypes::default_float();
  *this = from_values(vals, s, dt, device);
}

Tensor Tensor::from_values(const std::vector<PyConst>& data, const Shape& shape, DType dtype, const Arg& device) {
  if (contains(dtypes::weaks, dtype)) throw Error("cannot create storage for weak dtype " + dtype.repr());
  DType bdtype = dtype == dtypes::bfloat16 || contains(dtypes::fp8s, dtype) ? dtypes::float32 : dtype;
  std::vector<uint8_t> bytes(data.size() * (size_t)bdtype.itemsize());
  for (size_t i = 0; i < data.size(); i++)
    store_host_scalar(bytes.data() + i * (size_t)bdtype.itemsize(), bdtype, truncate(bdtype, bdtype.const_(data[i])));
  Arg dev = device.is_none() ? Arg(default_device()) : device;
  Tensor t = Tensor::wrap(uop_frompy(bytes, shape, dtype, dev));
  return t;
}

Tensor Tensor::from_bytes(const std::vector<uint8_t>& data, DType dtype, const Arg& device) {
  DType dt = dtype ? dtype : dtypes::uint8;
  if ((int64_t)data.size() % dt.itemsize() != 0) throw Error("from_bytes: size is not a multiple of the itemsize");
  return Tensor::wrap(uop_frompy(data, Shape{sint((pyint)(data.size() / (size_t)dt.itemsize()))}, dt,
                                 device.is_none() ? Arg(default_device()) : device));
}


std::string Tensor::device_str() const {
  Arg d = device();
  if (!d.is_str()) throw Error("tensor has no single device (" + arg_device_str(d) + ")");
  return d.as_str();
}

std::string Tensor::repr() const {
  std::string shape = "(";
  for (size_t i = 0; i < uop().shape().size(); i++) shape += (i ? ", " : "") + uop().shape()[i].str();
  shape += uop().shape().size() == 1 ? ",)" : ")";
  return "<Tensor <UOp " + arg_device_str(device()) + " " + shape + " " + dtype().repr().substr(7) + "> on " +
         arg_device_str(device()) + ">";
}

// ***** movement / ops that take Tensors *****

// ***** operators *****

Tensor operator+(const Tensor& a, const TOperand& b) { return a.add(b); }
Tensor operator-(const Tensor& a, const TOperand& b) { return a.sub(b); }
Tensor operator*(const Tensor& a, const TOperand& b) { return a.mul(b); }
Tensor operator/(const Tensor& a, const TOperand& b) { return a.div(b); }
Tensor operator%(const Tensor& a, const TOperand& b) { return a.mod(b); }
Tensor operator&(const Tensor& a, const TOperand& b) { return a.bitwise_and(b); }
Tensor operator|(const Tensor& a, const TOperand& b) { return a.bitwise_or(b); }
Tensor operator^(const Tensor& a, const TOperand& b) { return a.bitwise_xor(b); }
Tensor operator<<(const Tensor& a, const TOperand& b) { return a.lshift(b); }
Tensor operator>>(const Tensor& a, const TOperand& b) { return a.rshift(b); }
Tensor operator<(const Tensor& a, const TOperand& b) { return a.lt(b); }
Tensor operator>(const Tensor& a, const TOperand& b) { return a.gt(b); }
Tensor operator<=(const Tensor& a, const TOperand& b) { return a.le(b); }
Tensor operator>=(const Tensor& a, const TOperand& b) { return a.ge(b); }
Tensor operator==(const Tensor& a, const TOperand& b) { return a.eq(b); }
Tensor operator!=(const Tensor& a, const TOperand& b) { return a.ne(b); }
Tensor operator-(const Tensor& a) { return a.neg(); }
Tensor operator~(const Tensor& a) { return a.bitwise_not(); }
Tensor operator+(PyConst a, const Tensor& b) { return b.add(a, true); }
Tensor operator-(PyConst a, const Tensor& b) { return b.sub(a, true); }
Tensor operator*(PyConst a, const Tensor& b) { return b.mul(a, true); }
Tensor operator/(PyConst a, const Tensor& b) { return b.div(a, true); }

// ***** realize *****

CallifyResult Tensor::callify_sink(const std::vector<Tensor>& ts) {
  std::vector<UOp> srcs;
  for (const Tensor& t : ts) srcs.push_back(t.uop());
  return transform_to_call(UOp::sink(srcs));
}

Tensor& Tensor::callify(const std::vector<Tensor>& more) {
  std::vector<Tensor> ts{*this};
  ts.insert(ts.end(), more.begin(), more.end());
  CallifyResult r = callify_sink(ts);
  std::vector<std::pair<UOp, UOp>> m;
  for (const auto& [x, y] : r.buffer_map) m.emplace_back(x, y.after(r.call));
  apply_map_to_tensors(m, "callify");
  return *this;
}

std::pair<UOp, std::map<std::string, pyint>> Tensor::linear_with_vars(const std::vector<Tensor>& ts) {
  // weakness ends where storage begins
  for (const Tensor& t : ts)
    if (contains(dtypes::weaks, t.dtype()) && !t.uop().device().is_none())
      throw Error("cannot realize a weak dtype; cast to a concrete dtype first");
  CallifyResult r = callify_sink(ts);
  apply_map_to_tensors(r.buffer_map, "buffers");
  LinearWithVars lv = create_linear_with_vars(r.call);
  return {lv.linear, lv.var_vals};
}

UOp Tensor::schedule_linear(const std::vector<Tensor>& ts) {
  auto [linear, var_vals] = linear_with_vars(ts);
  if (!var_vals.empty()) throw Error("schedule_linear: the schedule has bound Variables; use linear_with_vars");
  return linear;
}

void Tensor::realize_all(const std::vector<Tensor>& ts, bool do_update_stats) {
  std::vector<Tensor> to_realize;
  for (const Tensor& t : ts)
    if (!uop_is_virtual(t.uop()) && !t.uop().has_buffer_identity()) to_realize.push_back(t);
  if (to_realize.empty()) return;
  collect_buffers();
  auto [linear, var_vals] = linear_with_vars(to_realize);
  run_linear(linear, var_vals, {}, do_update_stats);
}

Tensor& Tensor::realize(const std::vector<Tensor>& more, bool do_update_stats) {
  std::vector<Tensor> ts{*this};
  ts.insert(ts.end(), more.begin(), more.end());
  realize_all(ts, do_update_stats);
  return *this;
}

Tensor& Tensor::replace(const Tensor& x) {
  if (!shape_eq(shape(), x.shape())) throw Error("replace shape mismatch " + repr() + " != " + x.repr());
  set_uop(x.uop());
  return *this;
}

Tensor& Tensor::assign(const TOperand& x) {
  Operand o = x.op();
  if (o.is_uop()) return assign(Tensor::wrap(o.uop()));
  return assign(Tensor(UOp::const_(o.value(), dtype()), device(), dtype()));
}

Tensor& Tensor::assign(const Tensor& x_in) {
  if (contains(dtypes::weaks, dtype())) set_uop(uop_clone(uop()));
  Tensor x = x_in;
  if (uop() == x.uop()) return *this;  // a self assign is a NOOP
  // broadcast x (shape only, dtype must match)
  x = x.broadcast_to(shape());
  if (contains(dtypes::weaks, x.dtype())) x = x.cast(least_upper_dtype({dtype(), x.dtype()}));
  if (x.dtype() != dtype()) throw Error("assign dtype mismatch " + dtype().repr() + " != " + x.dtype().repr());
  Arg xd = x.uop().device(), sd = device();
  if (!xd.is_none() && !sd.is_none() && !(xd.is_str() && sd.is_str() && xd.as_str() == sd.as_str()))
    throw Error("assign device mismatch " + arg_device_str(sd) + " != " + arg_device_str(xd));
  // STORE+AFTER: STORE is the write effect (void), AFTER wraps the view for correct shape/ranging
  UOp assign = uop().after(uop().store(x.uop()));
  UOp ib = uop();
  while (!ib.has_buffer_identity() &&
         (GroupOp::Movement.has(ib.op()) || ib.op() == Ops::BITCAST || ib.op() == Ops::DETACH))
    ib = ib.src(0);
  if (!(ib == uop()) && ib.has_buffer_identity(true)) {
    // view assign: replace at the buffer-identity level
    apply_map_to_tensors({{ib, ib.after(assign)}}, "Embed View Assign");
  } else {
    set_uop(assign);
  }
  return *this;
}

Tensor Tensor::clone(const Arg& device) const { return Tensor(uop_clone(uop(), device)); }

Tensor Tensor::to(const Arg& device_arg) const {
  if (uop().device().is_none()) return *this;
  Arg dev = device_arg.is_none() ? Arg(default_device()) : Arg(canonicalize_device(device_arg.as_str()));
  Arg cur = device();
  if (cur.is_str() && cur.as_str() == dev.as_str()) return *this;
  get_device(dev.as_str());  // unknown devices are an error here, not at realize
  return Tensor(uop_copy_to_device(uop(), dev));
}

// ***** data *****

std::shared_ptr<Buffer> Tensor::buffer() const {
  Tensor x = contiguous();
  if (x.uop().device().is_none() || x.uop().device().is_tuple()) x = x.clone(Arg("CPU"));
  x.realize();
  std::shared_ptr<Buffer> b = uop_buffer(x.uop());
  if (!b->is_allocated()) throw Error("the tensor's buffer was never computed (did its realize fail?): " + repr());
  b->ensure_allocated();
  return b;
}

std::vector<uint8_t> Tensor::data() const {
  if (contains(dtypes::weaks, dtype())) return cast(strong_dtype(dtype())).data();
  for (const sint& s : shape()) {
    if (!s.is_int()) throw Error("no data if shape is symbolic, " + repr());
    if (s.i() == 0) return {};
  }
  std::shared_ptr<Buffer> b = buffer();
  std::vector<uint8_t> bytes = b->as_bytes();
  sint n = numel();
  bytes.resize((size_t)n.i() * (size_t)dtype().itemsize());
  return bytes;
}

std::vector<PyConst> Tensor::tolist_flat() const {
  if (contains(dtypes::weaks, dtype())) return cast(strong_dtype(dtype())).tolist_flat();
  std::vector<uint8_t> bytes = data();
  DType dt = dtype();
  std::vector<PyConst> out;
  for (size_t i = 0; i + (size_t)dt.itemsize() <= bytes.size(); i += (size_t)dt.itemsize())
    out.push_back(load_host_scalar(bytes.data() + i, dt));
  return out;
}

// ***** host scalars *****

namespace {
double half_to_double(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 0)
    v = std::ldexp((double)m, -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = std::ldexp((double)(m | 0x400), e - 25);
  return s ? -v : v;
}
uint16_t double_to_half(double d) {
  // round to nearest even through float
  float f = (float)d;
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, mant = x & 0x7fffff;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
  int e = (int)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t r = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) r++;
    return (uint16_t)(sign | r);
  }
  uint32_t r = ((uint32_t)e << 10) | (mant >> 13), rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
  return (uint16_t)(sign | r);
}
template <typename T>
T rd(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void wr(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}
double as_double(const PyConst& v) {
  return v.is_float() ? v.as_float() : v.is_bool() ? (v.truthy() ? 1.0 : 0.0) : (double)v.as_int();
}
pyint as_pyint(const PyConst& v) {
  return v.is_float() ? (pyint)v.as_float() : v.is_bool() ? (pyint)v.truthy() : v.as_int();
}
}  // namespace

PyConst load_host_scalar(const uint8_t* p, DType dt) {
  if (dt == dtypes::bool_) return PyConst(p[0] != 0);
  if (dt == dtypes::int8) return PyConst((pyint)rd<int8_t>(p));
  if (dt == dtypes::uint8) return PyConst((pyint)rd<uint8_t>(p));
  if (dt == dtypes::int16) return PyConst((pyint)rd<int16_t>(p));
  if (dt == dtypes::uint16) return PyConst((pyint)rd<uint16_t>(p));
  if (dt == dtypes::int32) return PyConst((pyint)rd<int32_t>(p));
  if (dt == dtypes::uint32) return PyConst((pyint)rd<uint32_t>(p));
  if (dt == dtypes::int64) return PyConst((pyint)rd<int64_t>(p));
  if (dt == dtypes::uint64) return PyConst((pyint)rd<uint64_t>(p));
  if (dt == dtypes::float16) return PyConst(half_to_double(rd<uint16_t>(p)));
  if (dt == dtypes::bfloat16) {
    uint32_t x = (uint32_t)rd<uint16_t>(p) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return PyConst((double)f);
  }
  if (dt == dtypes::float32) return PyConst((double)rd<float>(p));
  if (dt == dtypes::float64) return PyConst(rd<double>(p));
  if (contains(dtypes::fp8s, dt)) return PyConst(fp8_to_float(p[0], dt));
  throw Error("no host format for dtype " + dt.repr());
}

void store_host_scalar(uint8_t* p, DType dt, const PyConst& v) {
  if (dt == dtypes::bool_) return wr<uint8_t>(p, v.truthy() ? 1 : 0);
  if (dt == dtypes::int8) return wr<int8_t>(p, (int8_t)as_pyint(v));
  if (dt == dtypes::uint8) return wr<uint8_t>(p, (uint8_t)as_pyint(v));
  if (dt == dtypes::int16) return wr<int16_t>(p, (int16_t)as_pyint(v));
  if (dt == dtypes::uint16) return wr<uint16_t>(p, (uint16_t)as_pyint(v));
  if (dt == dtypes::int32) return wr<int32_t>(p, (int32_t)as_pyint(v));
  if (dt == dtypes::uint32) return wr<uint32_t>(p, (uint32_t)as_pyint(v));
  if (dt == dtypes::int64) return wr<int64_t>(p, (int64_t)as_pyint(v));
  if (dt == dtypes::uint64) return wr<uint64_t>(p, (uint64_t)as_pyint(v));
  if (dt == dtypes::float16) return wr<uint16_t>(p, double_to_half(as_double(v)));
  if (dt == dtypes::float32) return wr<float>(p, (float)as_double(v));
  if (dt == dtypes::float64) return wr<double>(p, as_double(v));
  throw Error("no host format for dtype " + dt.repr());
}

}  // namespace tg
