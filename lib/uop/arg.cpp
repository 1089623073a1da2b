#include "lib/uop/arg.h"

#include <cstring>

#include "lib/helpers.h"
#include "lib/pyfmt.h"

namespace tg {


namespace {
struct ArgStr final : ArgObj {
  std::string s;
  explicit ArgStr(std::string v) : s(std::move(v)) {}
  size_t hash() const override { return std::hash<std::string>()(s); }
  bool equals(const ArgObj& o) const override {
    auto* p = dynamic_cast<const ArgStr*>(&o);
    return p && p->s == s;
  }
  int py_cmp(const ArgObj& o) const override {
    auto* p = dynamic_cast<const ArgStr*>(&o);
    if (!p) return ArgObj::py_cmp(o);
    return s < p->s ? -1 : s > p->s ? 1 : 0;
  }
  std::string repr() const override { return py_str_repr(s); }
  std::string str() const override { return s; }
  const char* type_name() const override { return "str"; }
};
struct ArgTuple final : ArgObj {
  std::vector<Arg> items;
  size_t h;
  explicit ArgTuple(std::vector<Arg> v) : items(std::move(v)) {
    h = 0x345678;
    for (const Arg& a : items) h = (h ^ a.hash()) * 1000003;
  }
  size_t hash() const override { return h; }
  bool equals(const ArgObj& o) const override {
    auto* p = dynamic_cast<const ArgTuple*>(&o);
    if (!p || p->items.size() != items.size()) return false;
    for (size_t i = 0; i < items.size(); i++)
      if (!items[i].same(p->items[i])) return false;
    return true;
  }
  bool py_eq(const ArgObj& o) const override {
    auto* p = dynamic_cast<const ArgTuple*>(&o);
    if (!p || p->items.size() != items.size()) return false;
    for (size_t i = 0; i < items.size(); i++)
      if (!items[i].py_eq(p->items[i])) return false;
    return true;
  }
  void for_each_uop(void (*fn)(const UOp&, void*), void* ctx) const override {
    for (const Arg& a : items)
      if (a.obj()) a.obj()->for_each_uop(fn, ctx);
  }
  int py_cmp(const ArgObj& o) const override {
    auto* p = dynamic_cast<const ArgTuple*>(&o);
    if (!p) return ArgObj::py_cmp(o);
    size_t n = std::min(items.size(), p->items.size());
    for (size_t i = 0; i < n; i++) {
      if (items[i].py_eq(p->items[i])) continue;
      return items[i].py_cmp(p->items[i]);
    }
    return items.size() < p->items.size() ? -1 : items.size() > p->items.size() ? 1 : 0;
  }
  std::string repr() const override {
    std::string r = "(";
    for (size_t i = 0; i < items.size(); i++) r += (i ? ", " : "") + items[i].repr();
    if (items.size() == 1) r += ",";
    return r + ")";
  }
  const char* type_name() const override { return "tuple"; }
};
}  // namespace

int ArgObj::py_cmp(const ArgObj& o) const {
  // different payload types: order by type name (python would raise; this only keeps sorting total)
  int c = std::strcmp(type_name(), o.type_name());
  if (c != 0) return c < 0 ? -1 : 1;
  return repr() < o.repr() ? -1 : repr() > o.repr() ? 1 : 0;
}

Arg::Arg(const PyConst& c) : i_(0) {
  switch (c.kind) {
    case PyConst::Kind::Int: kind_ = Kind::Int, i_ = c.i; break;
    case PyConst::Kind::Float: kind_ = Kind::Float, f_ = c.f; break;
    case PyConst::Kind::Bool: kind_ = Kind::Bool, b_ = c.b; break;
    case PyConst::Kind::Invalid: kind_ = Kind::Invalid; break;
  }
}
Arg::Arg(const char* s) : Arg(std::string(s)) {}
Arg::Arg(std::string s) : kind_(Kind::Str), i_(0) {
  obj_ = new ArgStr(std::move(s));
  obj_->rc.fetch_add(1, std::memory_order_relaxed);
}
Arg::Arg(const ArgObj* obj) : kind_(Kind::Obj), i_(0) {
  obj_ = obj;
  obj_->rc.fetch_add(1, std::memory_order_relaxed);
}
Arg Arg::invalid() {
  Arg a;
  a.kind_ = Kind::Invalid;
  return a;
}
Arg Arg::tuple(std::vector<Arg> items) {
  Arg a;
  const ArgObj* t = new ArgTuple(std::move(items));
  t->rc.fetch_add(1, std::memory_order_relaxed);
  a.kind_ = Kind::Tuple, a.obj_ = t;
  return a;
}

void Arg::release() {  // has_obj()
  if (obj_->rc.fetch_sub(1, std::memory_order_acq_rel) == 1) delete obj_;
  kind_ = Kind::None, i_ = 0;
}

PyConst Arg::as_const() const {
  switch (kind_) {
    case Kind::Int: return PyConst(i_);
    case Kind::Float: return PyConst(f_);
    case Kind::Bool: return PyConst(b_);
    case Kind::Invalid: return PyConst::invalid();
    default: throw Error("arg " + repr() + " is not a constant");
  }
}
pyint Arg::as_int() const {
  if (kind_ == Kind::Int) return i_;
  if (kind_ == Kind::Bool) return b_;
  throw Error("arg " + repr() + " is not an int");
}
double Arg::as_float() const { return as_const().as_float(); }
bool Arg::as_bool() const { return as_const().truthy(); }
const std::string& Arg::as_str() const {
  if (kind_ != Kind::Str) throw Error("arg " + repr() + " is not a str");
  return static_cast<const ArgStr*>(obj_)->s;
}
DType Arg::as_dtype() const {
  if (kind_ != Kind::DType) throw Error("arg " + repr() + " is not a dtype");
  return DType(dt_);
}
Ops Arg::as_op() const {
  if (kind_ != Kind::Op) throw Error("arg " + repr() + " is not an Ops");
  return op_;
}
AxisType Arg::as_axis() const {
  if (kind_ != Kind::Axis) throw Error("arg " + repr() + " is not an AxisType");
  return ax_;
}
const std::vector<Arg>& Arg::items() const {
  if (kind_ != Kind::Tuple) throw Error("arg " + repr() + " is not a tuple");
  return static_cast<const ArgTuple*>(obj_)->items;
}

size_t Arg::hash_other() const {
  switch (kind_) {
    case Kind::None: return 0x1234567;
    case Kind::Int: case Kind::Float: case Kind::Bool: case Kind::Invalid: return hash_const(as_const());
    case Kind::DType: return (size_t)dt_ * 0x9E3779B97F4A7C15ull;
    case Kind::Op: return 0x51ed27 + (size_t)op_ * 0x2545F4914F6CDD1Dull;
    case Kind::Axis: return 0xa51 + (size_t)ax_ * 0x2545F4914F6CDD1Dull;
    case Kind::Str: case Kind::Tuple: case Kind::Obj: return obj_->hash();
  }
  return 0;
}

bool Arg::same_other(const Arg& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::None: case Kind::Invalid: return true;
    case Kind::Int: return i_ == o.i_;
    case Kind::Float: return std::memcmp(&f_, &o.f_, sizeof(double)) == 0;
    case Kind::Bool: return b_ == o.b_;
    case Kind::DType: return dt_ == o.dt_;
    case Kind::Op: return op_ == o.op_;
    case Kind::Axis: return ax_ == o.ax_;
    case Kind::Str: case Kind::Tuple: case Kind::Obj: return obj_ == o.obj_ || obj_->equals(*o.obj_);
  }
  return false;
}

bool Arg::py_eq_other(const Arg& o) const {
  if (is_const() && o.is_const()) return as_const() == o.as_const();
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::Str: case Kind::Tuple: case Kind::Obj: return obj_ == o.obj_ || obj_->py_eq(*o.obj_);
    default: return same(o);
  }
}

int Arg::py_cmp_other(const Arg& o) const {
  if (is_const() && o.is_const() && !is_invalid() && !o.is_invalid()) {
    PyConst a = as_const(), b = o.as_const();
    return py_lt(a, b) ? -1 : py_lt(b, a) ? 1 : 0;
  }
  if (kind_ != o.kind_) return (int)kind_ < (int)o.kind_ ? -1 : 1;
  switch (kind_) {
    case Kind::None: case Kind::Invalid: return 0;
    case Kind::DType: return DType(dt_) < DType(o.dt_) ? -1 : DType(o.dt_) < DType(dt_) ? 1 : 0;
    case Kind::Op: return op_ < o.op_ ? -1 : op_ > o.op_ ? 1 : 0;
    case Kind::Axis: return ax_ < o.ax_ ? -1 : ax_ > o.ax_ ? 1 : 0;
    case Kind::Str: case Kind::Tuple: case Kind::Obj: return obj_->py_cmp(*o.obj_);
    default: return 0;
  }
}

std::string Arg::repr() const {
  switch (kind_) {
    case Kind::None: return "None";
    case Kind::Int: case Kind::Bool: case Kind::Invalid: return as_const().str();
    case Kind::Float: return py_float_repr(f_);
    case Kind::DType: return DType(dt_).repr();
    case Kind::Op: return op_repr(op_);
    case Kind::Axis: return std::string("AxisType.") + axis_type_name(ax_);
    case Kind::Str: case Kind::Tuple: case Kind::Obj: return obj_->repr();
  }
  return "?";
}
std::string Arg::str() const {
  if (kind_ == Kind::Str || kind_ == Kind::Obj) return obj_->str();
  return repr();
}

// ***** ParamArg *****

size_t ParamArg::hash() const {
  size_t h = std::hash<int64_t>()(slot) * 31 + (size_t)dtype.data();
  h = h * 31 + (has_vminmax ? hash_const(vmin) ^ (hash_const(vmax) << 1) : 7);
  h = h * 31 + (has_multiple_of ? (size_t)multiple_of : 11);
  h = h * 31 + (has_name ? std::hash<std::string>()(name) : 13);
  h = h * 31 + (has_addrspace ? (size_t)addrspace : 17);
  h = h * 31 + (has_axis ? (size_t)axis : 19);
  h = h * 31 + device.hash();
  return h * 31 + volatile_;
}
bool ParamArg::equals(const ArgObj& o) const {
  auto* p = dynamic_cast<const ParamArg*>(&o);
  if (!p) return false;
  return slot == p->slot && dtype == p->dtype && has_vminmax == p->has_vminmax &&
         (!has_vminmax || (same_const(vmin, p->vmin) && same_const(vmax, p->vmax))) &&
         has_multiple_of == p->has_multiple_of && (!has_multiple_of || multiple_of == p->multiple_of) &&
         has_name == p->has_name && name == p->name && has_addrspace == p->has_addrspace &&
         (!has_addrspace || addrspace == p->addrspace) && has_axis == p->has_axis && (!has_axis || axis == p->axis) &&
         device.same(p->device) && volatile_ == p->volatile_;
}
// an order=True dataclass: compare the field tuples
static Arg param_fields(const ParamArg& p) {
  return Arg::tuple({Arg((long long)p.slot), Arg(p.dtype),
                     p.has_vminmax ? Arg::tup(Arg(p.vmin), Arg(p.vmax)) : Arg(),
                     p.has_multiple_of ? Arg((long long)p.multiple_of) : Arg(), p.has_name ? Arg(p.name) : Arg(),
                     p.has_addrspace ? Arg((int)p.addrspace) : Arg(), p.has_axis ? Arg((long long)p.axis) : Arg(),
                     p.device, Arg(p.volatile_)});
}
int ParamArg::py_cmp(const ArgObj& o) const {
  auto* p = dynamic_cast<const ParamArg*>(&o);
  if (!p) return ArgObj::py_cmp(o);
  // the tuples' first fields decide when they differ (python tuple order), without building the tuples
  if (slot != p->slot) return slot < p->slot ? -1 : 1;
  return param_fields(*this).py_cmp(param_fields(*p));
}
std::string ParamArg::repr() const {
  std::string r = "ParamArg(" + std::to_string(slot) + ", " + dtype.repr();
  if (has_vminmax) r += ", vmin_vmax=(" + vmin.str() + ", " + vmax.str() + ")";
  if (has_multiple_of) r += ", multiple_of=" + std::to_string(multiple_of);
  if (has_name) r += ", name=" + py_str_repr(name);
  if (!has_addrspace) r += ", addrspace=None";
  else if (addrspace != AddrSpace::GLOBAL) r += std::string(", addrspace=AddrSpace.") + addrspace_name(addrspace);
  if (has_axis) r += ", axis=" + std::to_string(axis);
  if (!device.is_none()) r += ", device=" + device.repr();
  if (volatile_) r += ", volatile=True";
  return r + ")";
}

}  // namespace tg
