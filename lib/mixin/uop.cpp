// The UOp side of the builder mixins: the hooks the mixins build on (const, const_like, ufix, alu, _mop, _rop,
// empty_like, device) and the UOp's own builders of tinygrad/uop/ops.py (sink, group, index, load, store, range, ...).
#include "lib/uop/uop.h"

#include <algorithm>
#include <atomic>

#include "lib/device.h"
#include "lib/helpers.h"
#include "lib/mixin/helpers.h"

namespace tg {

using namespace mixin;

UOp UOp::const_(PyConst b, DType dtype) {
  if (!dtype || b.is_invalid()) dtype = dtypes::from_py(b);
  if (b.is_int())
    if (UOp u = detail::small_int_const(dtype, b.as_int())) return u;
  return UOp(Ops::CONST, dtype, std::span<const UOp>{}, Arg(dtype.const_(b)));
}
UOp UOp::const_(const UOp& b, DType dtype) {
  if (!dtype) throw Error("const: could not infer the dtype of a UOp fill value");
  return b.cast(dtype);
}

UOp UOp::const_like(PyConst b, DType dt) const {
  UOp ret = const_(b, dt ? dt : dtype());
  const auto& s = shape_opt();
  if (s && !s->empty() && !(ret.shape_opt() && shape_eq(*ret.shape_opt(), *s))) return ret.mop(Ops::EXPAND, *s);
  return ret;
}

UOp UOp::ufix(const Operand& x) const { return x.is_uop() ? x.uop() : const_(x.value()); }

UOp UOp::range(sint end, int64_t axis_id, AxisType axis_type, DType dtype) {
  UOp e = sint_to_uop(end, dtype ? dtype : dtypes::weakint);
  return UOp(Ops::RANGE, DType(), {e}, Arg::tup(axis_id, axis_type));
}
UOp UOp::special(sint end, const std::string& name, DType dtype) {
  UOp e = sint_to_uop(end, dtype ? dtype : dtypes::weakint);
  return UOp(Ops::SPECIAL, DType(), {e}, Arg(name));
}
// the srcs without the null ones (a copy only when there is one)
static UOp without_nulls(Ops op, std::span<const UOp> srcs, Arg arg) {
  if (std::all_of(srcs.begin(), srcs.end(), [](const UOp& x) { return (bool)x; }))
    return UOp(op, DType(), srcs, std::move(arg));
  std::vector<UOp> s;
  s.reserve(srcs.size());
  for (const UOp& x : srcs)
    if (x) s.push_back(x);
  return UOp(op, DType(), s, std::move(arg));
}
UOp UOp::sink(std::span<const UOp> srcs, Arg arg) { return without_nulls(Ops::SINK, srcs, std::move(arg)); }
UOp UOp::group(std::span<const UOp> srcs) {
  if (srcs.size() == 1 && srcs[0]) return srcs[0];
  return without_nulls(Ops::GROUP, srcs, Arg());
}
UOp UOp::broadcast(int64_t count) const {
  if (count == 1) return *this;
  std::vector<UOp> s(count, *this);
  return UOp(Ops::STACK, DType(), s);
}
UOp UOp::vconst_like(PyConst b) const { return const_(b, dtype()).broadcast((int64_t)max_numel()); }
// UOp(op, (first, *rest)): the srcs borrowed (first and rest hold them), on the stack when they are few
static UOp with_first(Ops op, const UOp& first, std::span<const UOp> rest, Arg arg = Arg()) {
  constexpr size_t kInline = 8;
  if (rest.size() < kInline) {
    detail::UOpNode* buf[kInline];
    buf[0] = first.node();
    for (size_t i = 0; i < rest.size(); i++) buf[i + 1] = rest[i].node();
    return UOp(op, DType(), std::span<const UOp>(reinterpret_cast<const UOp*>(buf), rest.size() + 1), std::move(arg));
  }
  std::vector<UOp> s{first};
  s.insert(s.end(), rest.begin(), rest.end());
  return UOp(op, DType(), s, std::move(arg));
}

UOp UOp::index(std::span<const UOp> idx) const {
  if (idx.size() == 1 && idx[0].op() == Ops::CONST && op() == Ops::STACK) return src((size_t)idx[0].val().as_int());
  return with_first(Ops::INDEX, *this, idx);
}
UOp UOp::load(std::span<const UOp> srcs) const { return with_first(Ops::LOAD, *this, srcs); }
UOp UOp::store(const UOp& val) const { return UOp(Ops::STORE, DType(), {*this, val}); }
UOp UOp::store(const UOp& val, const UOp& gate) const { return UOp(Ops::STORE, DType(), {*this, val, gate}); }
UOp UOp::end(std::span<const UOp> srcs) const {
  if (srcs.empty()) return *this;
  return with_first(Ops::END, *this, srcs);
}
UOp UOp::after(std::span<const UOp> srcs) const {
  if (srcs.empty()) return *this;
  return with_first(Ops::AFTER, *this, srcs);
}
UOp UOp::reduce(std::span<const UOp> rngs, Ops rop) const {
  return with_first(Ops::REDUCE, *this, rngs, Arg::tup(rop, 0));
}
UOp UOp::valid(const UOp& cond) const { return cond.where(*this, const_like(PyConst::invalid())); }
UOp UOp::get_idx() const {
  if (op() == Ops::STACK) {
    std::vector<UOp> s;
    for (const UOp& x : src()) s.push_back(x.get_idx());
    return UOp::stack(s);
  }
  return (op() == Ops::WHERE && src(2).is_invalid()) ? src(1) : *this;
}
UOp UOp::get_valid() const {
  if (op() == Ops::STACK) {
    std::vector<UOp> s;
    for (const UOp& x : src()) s.push_back(x.get_valid());
    return UOp::stack(s);
  }
  return (op() == Ops::WHERE && src(2).is_invalid()) ? src(0) : const_(PyConst(!is_invalid()));
}
UOp UOp::alu(Ops op) const { return UOp(op, DType(), {*this}); }
UOp UOp::alu(Ops op, const UOp& a) const { return UOp(op, DType(), {*this, a}); }
UOp UOp::alu(Ops op, const UOp& a, const UOp& b) const { return UOp(op, DType(), {*this, a, b}); }

// ************************* _mop / _rop *************************

static UOp shape_to_shape_arg(const Shape& shape) {
  std::vector<UOp> src;
  src.reserve(shape.size());
  for (const sint& x : shape) {
    UOp u = x.is_int() ? UOp::const_(PyConst(x.i())) : x.u();
    if (!dtypes::is_int(u.dtype()))
      throw Error("shape must be int, got " + u.dtype().repr() + " in " + shape_str(shape));
    src.push_back(u);
  }
  return src.size() == 1 ? src[0] : UOp(Ops::STACK, DType(), src);
}

// simplify of the shape args' SINK, which is the SINK itself when every dim is an int: a STACK of int CONSTs (or one
// CONST) matches no rule of symbolic (codegen reshapes every devectorized lane stack: a rewrite each, for nothing)
static UOp simplified_shape_args(std::initializer_list<const Shape*> shapes, std::initializer_list<UOp> args) {
  UOp s = UOp::sink(args);
  for (const Shape* sh : shapes)
    for (const sint& d : *sh)
      if (!d.is_int()) return s.simplify();
  return s;
}
UOp UOp::mop(Ops op, const Shape& shape) const {
  if (op == Ops::EXPAND && shape.empty()) return *this;
  if (op != Ops::RESHAPE && op != Ops::EXPAND)
    throw Error(std::string(op_repr(op)) + " is not a MovementOp with a shape");
  UOp s = simplified_shape_args({&shape}, {shape_to_shape_arg(shape)});
  return UOp(op, DType(), {*this, s.src(0)});
}
UOp UOp::mop(Ops op, const std::vector<std::pair<sint, sint>>& arg) const {
  if (op != Ops::PAD && op != Ops::SHRINK) throw Error(std::string(op_repr(op)) + " is not a MovementOp with pairs");
  if (arg.empty()) {
    if (!shape().empty()) throw Error("0 len arg only valid on zero length shape");
    return *this;
  }
  Shape offs, sizes;
  for (const auto& [a, b] : arg) offs.push_back(a), sizes.push_back(b);
  UOp s = simplified_shape_args({&offs, &sizes}, {shape_to_shape_arg(offs), shape_to_shape_arg(sizes)});
  return UOp(op, DType(), {*this, s.src(0), s.src(1)});
}
UOp UOp::mop(Ops op, Arg arg) const {
  if (op != Ops::PERMUTE && op != Ops::FLIP) throw Error(std::string(op_repr(op)) + " is not a MovementOp with an arg");
  return UOp(op, DType(), {*this}, std::move(arg));
}

UOp UOp::rop(Ops op, std::vector<int64_t> axis) const {
  std::sort(axis.begin(), axis.end());
  const Shape& sh = shape();
  for (int64_t x : axis)
    if (x < 0 || x >= (int64_t)sh.size())
      throw Error("reduce: axis " + std::to_string(x) + " out of range for " + shape_str(sh));
  std::vector<int64_t> reduce_axis;
  for (int64_t x : axis)
    if (resolve(s_ne(sh[x], 1))) reduce_axis.push_back(x);
  auto kept_shape = [&]() {
    Shape r;
    for (size_t i = 0; i < sh.size(); i++)
      if (std::find(axis.begin(), axis.end(), (int64_t)i) == axis.end()) r.push_back(sh[i]);
    return r;
  };
  if (reduce_axis.empty()) return reshape(kept_shape());
  std::vector<int64_t> perm = reduce_axis;
  for (int64_t i = 0; i < (int64_t)sh.size(); i++)
    if (std::find(reduce_axis.begin(), reduce_axis.end(), i) == reduce_axis.end()) perm.push_back(i);
  UOp ret(Ops::REDUCE, DType(), {permute(perm)}, Arg::tup(op, (int64_t)reduce_axis.size()));
  return axis != reduce_axis ? ret.reshape(kept_shape()) : ret;
}

// ************************* storage *************************

static std::atomic<int64_t> g_unique_num{0};

UOp UOp::param(int64_t slot, DType dtype, const std::optional<Shape>& shape, Arg device) {
  if (contains(dtypes::weaks, dtype)) throw Error("cannot create param for weak dtype " + dtype.repr());
  auto* p = new ParamArg();
  p->slot = slot;
  p->dtype = dtype;
  p->device = std::move(device);
  Arg a(static_cast<const ArgObj*>(p));
  UOp s = shape ? shape_to_shape_arg(*shape) : UOp(Ops::NOOP);
  return UOp(Ops::PARAM, DType(), {s}, a);
}
UOp UOp::new_buffer(const Arg& device, pyint size, DType dtype, std::optional<int64_t> num) {
  if (contains(dtypes::weaks, dtype)) throw Error("cannot create storage for weak dtype " + dtype.repr());
  if (device.is_str()) check_buffer_fits(device.as_str(), size, dtype);
  auto* p = new ParamArg();
  p->slot = num ? *num : g_unique_num.fetch_add(1);
  p->dtype = dtype;
  p->device = device;
  Arg a(static_cast<const ArgObj*>(p));
  return UOp(Ops::BUFFER, DType(), {shape_to_shape_arg({sint(size)})}, a);
}

UOp UOp::placeholder(const Shape& shape, DType dtype0, int64_t slot, AddrSpace addrspace, Arg device) {
  DType dtype = strong_dtype(dtype0);  // storage is never weak: a placeholder commits the width of what's put in it
  auto* p = new ParamArg();
  p->slot = slot;
  p->dtype = dtype;
  p->addrspace = addrspace;
  UOp size = shape_to_shape_arg({sprod(shape)});
  UOp ret;
  if (addrspace == AddrSpace::GLOBAL) {
    p->device = std::move(device);
    ret = UOp(Ops::PARAM, DType(), {size}, Arg(static_cast<const ArgObj*>(p)));
  } else {
    bool ok = (addrspace == AddrSpace::LOCAL || addrspace == AddrSpace::REG) && device.is_none();
    Arg a(static_cast<const ArgObj*>(p));
    if (!ok)
      throw Error("placeholder: LOCAL and REG placeholders cannot have a device, other addrspaces must be GLOBAL");
    ret = UOp(Ops::BUFFER, DType(), {size}, a);
  }
  return shape.size() > 1 ? ret.reshape(shape) : ret;
}

std::vector<int64_t> broadcast_axes(const Shape& src, const Shape& out) {
  int64_t nleft = (int64_t)out.size() - (int64_t)src.size();
  if (nleft < 0) throw Error("cannot broadcast " + shape_str(src) + " into " + shape_str(out));
  std::vector<int64_t> r;
  for (int64_t i = 0; i < nleft; i++) r.push_back(i);
  for (int64_t i = 0; i < (int64_t)src.size(); i++)
    if (s_eq(src[i], 1) && resolve(s_ne(out[nleft + i], 1))) r.push_back(nleft + i);
  return r;
}

bool UOp::has_buffer_identity(bool after_ok) const {
  UOp u = *this;
  while (u.op() == Ops::RESHAPE || u.op() == Ops::UNSHARD || u.op() == Ops::MSELECT ||
         (after_ok && u.op() == Ops::AFTER))
    u = u.src(0);
  return u.op() == Ops::BUFFER || u.op() == Ops::PARAM;
}

// addrspace is a recursive property in the reference; here it is computed over the graph on each call (device is
// cached per node: lib/uop/uop.cpp)

}  // namespace tg
