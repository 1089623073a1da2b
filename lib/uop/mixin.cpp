// UOp builders and operators: the constructors and math/movement methods of tinygrad's mixins (mixin/math.py,
// mixin/movement.py) and the UOp helper constructors of uop/ops.py.
#include <algorithm>

#include "lib/helpers.h"
#include "lib/uop/uop.h"

namespace tg {

UOp UOp::const_(PyConst b, DType dtype) {
  if (!dtype || b.is_invalid()) dtype = dtypes::from_py(b);
  return UOp(Ops::CONST, dtype, std::span<const UOp>{}, Arg(dtype.const_(b)));
}

UOp UOp::const_like(PyConst b, DType dt) const {
  UOp ret = const_(b, dt ? dt : dtype());
  const auto& s = shape_opt();
  if (s && !s->empty() && !(ret.shape_opt() && shape_eq(*ret.shape_opt(), *s))) return ret.mop(Ops::EXPAND, *s);
  return ret;
}

UOp UOp::range(sint end, int64_t axis_id, AxisType axis_type, DType dtype) {
  UOp e = sint_to_uop(end, dtype ? dtype : dtypes::weakint);
  return UOp(Ops::RANGE, DType(), {e}, Arg::tup(axis_id, axis_type));
}
UOp UOp::special(sint end, const std::string& name, DType dtype) {
  UOp e = sint_to_uop(end, dtype ? dtype : dtypes::weakint);
  return UOp(Ops::SPECIAL, DType(), {e}, Arg(name));
}
UOp UOp::sink(std::span<const UOp> srcs, Arg arg) {
  std::vector<UOp> s;
  for (const UOp& x : srcs)
    if (x) s.push_back(x);
  return UOp(Ops::SINK, DType(), s, std::move(arg));
}
UOp UOp::group(std::span<const UOp> srcs) {
  if (srcs.size() == 1 && srcs[0]) return srcs[0];
  std::vector<UOp> s;
  for (const UOp& x : srcs)
    if (x) s.push_back(x);
  return UOp(Ops::GROUP, DType(), s);
}
UOp UOp::stack(std::span<const UOp> srcs) {
  // _mop(STACK): consts are recreated at the promoted dtype, other srcs are cast
  DType dt = dtype_from_uop(Ops::STACK, srcs, Arg());
  std::vector<UOp> s;
  for (const UOp& u : srcs) {
    if (u.base().is_invalid()) s.push_back(u);
    else if (u.op() == Ops::CONST) s.push_back(const_(u.val(), dt));
    else s.push_back(u.cast(dt));
  }
  return UOp(Ops::STACK, dt, s);
}
UOp UOp::broadcast(int64_t count) const {
  if (count == 1) return *this;
  std::vector<UOp> s(count, *this);
  return UOp(Ops::STACK, DType(), s);
}
UOp UOp::index(std::span<const UOp> idx) const {
  if (idx.size() == 1 && idx[0].op() == Ops::CONST && op() == Ops::STACK) return src((size_t)idx[0].val().as_int());
  std::vector<UOp> s{*this};
  s.insert(s.end(), idx.begin(), idx.end());
  return UOp(Ops::INDEX, DType(), s);
}
UOp UOp::load(std::span<const UOp> srcs) const {
  std::vector<UOp> s{*this};
  s.insert(s.end(), srcs.begin(), srcs.end());
  return UOp(Ops::LOAD, DType(), s);
}
UOp UOp::store(const UOp& val) const { return UOp(Ops::STORE, DType(), {*this, val}); }
UOp UOp::end(std::span<const UOp> srcs) const {
  if (srcs.empty()) return *this;
  std::vector<UOp> s{*this};
  s.insert(s.end(), srcs.begin(), srcs.end());
  return UOp(Ops::END, DType(), s);
}
UOp UOp::after(std::span<const UOp> srcs) const {
  if (srcs.empty()) return *this;
  std::vector<UOp> s{*this};
  s.insert(s.end(), srcs.begin(), srcs.end());
  return UOp(Ops::AFTER, DType(), s);
}
UOp UOp::reduce(std::span<const UOp> rngs, Ops rop) const {
  std::vector<UOp> s{*this};
  s.insert(s.end(), rngs.begin(), rngs.end());
  return UOp(Ops::REDUCE, DType(), s, Arg::tup(rop, 0));
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
UOp UOp::cast(DType d) const { return dtype() == d ? *this : UOp(Ops::CAST, d, {*this}, Arg(d)); }
UOp UOp::bitcast(DType d) const {
  if (contains(dtypes::weaks, dtype()) || contains(dtypes::weaks, d))
    throw Error("bitcast requires concrete dtypes, got " + dtype().repr() + " -> " + d.repr());
  return dtype() == d ? *this : UOp(Ops::BITCAST, d, {*this}, Arg(d));
}
UOp UOp::alu(Ops op) const { return UOp(op, DType(), {*this}); }
UOp UOp::alu(Ops op, const UOp& a) const { return UOp(op, DType(), {*this, a}); }
UOp UOp::alu(Ops op, const UOp& a, const UOp& b) const { return UOp(op, DType(), {*this, a, b}); }

std::pair<UOp, UOp> UOp::broadcasted(const UOp& y0, bool reverse) const {
  const UOp& x = reverse ? y0 : *this;
  const UOp& y = reverse ? *this : y0;
  DType out = least_upper_dtype({x.dtype(), y.dtype()});
  auto promote = [&](const UOp& t) -> UOp {
    UOp b = t.base();
    if (b.is_invalid()) return t;
    if (contains(dtypes::weaks, t.dtype()) && b.op() == Ops::CONST) return t.const_like(b.val(), weak_dtype(out));
    return t.cast(out);
  };
  return {promote(x), promote(y)};
}
UOp UOp::binop(Ops op, const UOp& x, bool reverse) const {
  auto [a, b] = broadcasted(x, reverse);
  return a.alu(op, b);
}
UOp UOp::sub(const UOp& x, bool reverse) const {
  auto [a, b] = broadcasted(x, reverse);
  return a.alu(Ops::ADD, b.neg());
}
UOp UOp::neg() const { return dtype() == dtypes::bool_ ? logical_not() : mul(const_(PyConst(-1))); }
UOp UOp::div(const UOp& x, bool reverse) const {
  auto [a, b] = broadcasted(x, reverse);
  if (dtypes::is_int(a.dtype()) || a.dtype() == dtypes::bool_) a = a.cast(dtypes::default_float());
  return a.alu(Ops::MUL, b.reciprocal());
}
UOp UOp::floordiv(const UOp& x, bool reverse) const {
  auto [a, b] = broadcasted(x, reverse);
  if (dtypes::is_int(a.dtype()) && dtypes::is_int(b.dtype())) return a.alu(Ops::FLOORDIV, b);
  if (dtypes::is_int(a.dtype()) || a.dtype() == dtypes::bool_) a = a.cast(dtypes::default_float());
  UOp d = a.alu(Ops::MUL, b.reciprocal());
  UOp t = d.trunc();
  return d.lt(t).where(t - PyConst(1), t);
}
UOp UOp::mod(const UOp& x, bool reverse) const {
  auto [a, b] = broadcasted(x, reverse);
  if (dtypes::is_int(a.dtype()) && dtypes::is_int(b.dtype())) return a.alu(Ops::FLOORMOD, b);
  return a - a.floordiv(b) * b;
}
UOp UOp::bitwise_not() const {
  if (dtype() == dtypes::bool_) return logical_not();
  return dtypes::is_unsigned(dtype()) ? (*this ^ UOp::const_(dtype().max())) : (*this ^ UOp::const_(PyConst(-1)));
}
UOp UOp::minimum(const UOp& x) const {
  auto [t, y] = broadcasted(x);
  DType dt = least_upper_dtype({t.dtype(), y.dtype()});
  if (dtypes::is_float(dt)) return -((-t).alu(Ops::MAX, -y));
  UOp k = const_(dt.const_(PyConst(sat_add(dt.min().as_int(), dt.max().as_int()))));
  return (t ^ k).alu(Ops::MAX, y ^ k) ^ k;
}
UOp UOp::where(const UOp& x, const UOp& y) const {
  auto [a, b] = x.broadcasted(y);
  return alu(Ops::WHERE, a, b);
}
UOp UOp::pow(const UOp& x, bool reverse) const {
  auto [b, e] = broadcasted(x, reverse);
  return b.alu(Ops::POW, e);
}
UOp UOp::usum(std::span<const UOp> more) const {
  UOp acc = *this;
  for (const UOp& u : more) acc = acc.dtype() == dtypes::bool_ ? (acc | u) : (acc + u);
  return acc;
}
UOp UOp::uprod(std::span<const UOp> more) const {
  UOp acc = *this;
  for (const UOp& u : more) acc = acc.dtype() == dtypes::bool_ ? (acc & u) : (acc * u);
  return acc;
}
UOp UOp::usum_of(std::span<const UOp> all) { return all[0].usum(all.subspan(1)); }
UOp UOp::uprod_of(std::span<const UOp> all) { return all[0].uprod(all.subspan(1)); }

static UOp shape_to_shape_arg(const Shape& shape) {
  std::vector<UOp> src;
  for (const sint& x : shape) {
    UOp u = x.is_int() ? UOp::const_(PyConst(x.i())) : x.u();
    if (!dtypes::is_int(u.dtype())) throw Error("shape must be int, got " + u.dtype().repr());
    src.push_back(u);
  }
  return src.size() == 1 ? src[0] : UOp(Ops::STACK, DType(), src);
}

UOp UOp::mop(Ops op, const Shape& shape) const {
  if (op == Ops::EXPAND && shape.empty()) return *this;
  if (op != Ops::RESHAPE && op != Ops::EXPAND) throw Error("mop with a shape only for RESHAPE/EXPAND");
  UOp arg = shape_to_shape_arg(shape);
  UOp s = UOp::sink({arg}).simplify();
  return UOp(op, DType(), {*this, s.src(0)});
}
UOp UOp::permute(const std::vector<int64_t>& order) const {
  std::vector<Arg> a;
  for (int64_t i : order) a.push_back(Arg(i));
  return UOp(Ops::PERMUTE, DType(), {*this}, Arg::tuple(a));
}

// ************************* operators *************************

UOp operator+(const UOp& a, const UOp& b) { return a.add(b); }
UOp operator-(const UOp& a, const UOp& b) { return a.sub(b); }
UOp operator*(const UOp& a, const UOp& b) { return a.mul(b); }
UOp operator/(const UOp& a, const UOp& b) { return a.div(b); }
UOp operator%(const UOp& a, const UOp& b) { return a.mod(b); }
UOp operator&(const UOp& a, const UOp& b) { return a.binop(Ops::AND, b); }
UOp operator|(const UOp& a, const UOp& b) { return a.binop(Ops::OR, b); }
UOp operator^(const UOp& a, const UOp& b) { return a.binop(Ops::XOR, b); }
UOp operator<<(const UOp& a, const UOp& b) { return a.binop(Ops::SHL, b); }
UOp operator>>(const UOp& a, const UOp& b) { return a.binop(Ops::SHR, b); }
UOp operator<(const UOp& a, const UOp& b) { return a.lt(b); }
UOp operator>(const UOp& a, const UOp& b) { return a.gt(b); }
UOp operator<=(const UOp& a, const UOp& b) { return a.gt(b).logical_not(); }
UOp operator>=(const UOp& a, const UOp& b) { return a.lt(b).logical_not(); }
UOp operator-(const UOp& a) { return a.neg(); }
UOp operator~(const UOp& a) { return a.bitwise_not(); }

}  // namespace tg
