// The `arg` of a UOp (and its `tag`): a python-like immutable value. Covers every argument kind the engine uses:
// None, int, float, bool, Invalid, str, DType, Ops, AxisType, tuples of these, and structured objects (ParamArg, ...).
#pragma once
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lib/dtype.h"
#include "lib/pyfmt.h"
#include "lib/uop/ops.h"

namespace tg {

class Arg;
class UOp;

// Base of heap payloads (strings, tuples, structured args). Immutable, intrusively refcounted.
class ArgObj {
 public:
  virtual ~ArgObj() = default;
  virtual size_t hash() const = 0;
  virtual bool equals(const ArgObj& o) const = 0;       // identity for hash-consing (strict)
  virtual bool py_eq(const ArgObj& o) const { return equals(o); }  // python ==
  virtual int py_cmp(const ArgObj& o) const;            // python ordering where the reference compares
  virtual std::string repr() const = 0;
  virtual std::string str() const { return repr(); }
  virtual const char* type_name() const = 0;
  // every UOp the object holds (adopt_private hands them to other threads with the nodes they are args of)
  virtual void for_each_uop(void (*)(const UOp&, void*), void*) const {}
  mutable std::atomic<uint32_t> rc{0};
};

class Arg {
 public:
  enum class Kind : uint8_t { None, Int, Float, Bool, Invalid, Str, DType, Op, Axis, Tuple, Obj };

  Arg() : kind_(Kind::None), i_(0) {}
  Arg(std::nullptr_t) : Arg() {}
  Arg(int v) : kind_(Kind::Int), i_(v) {}
  Arg(long v) : kind_(Kind::Int), i_(v) {}
  Arg(long long v) : kind_(Kind::Int), i_(v) {}
  Arg(pyint v) : kind_(Kind::Int), i_(v) {}
  Arg(unsigned long v) : kind_(Kind::Int), i_((pyint)v) {}
  Arg(double v) : kind_(Kind::Float), i_(0) { f_ = v; }
  Arg(bool v) : kind_(Kind::Bool), i_(0) { b_ = v; }
  Arg(const PyConst& c);
  Arg(const char* s);
  Arg(std::string s);
  Arg(DType d) : kind_(Kind::DType), i_(0) { dt_ = d.data(); }
  Arg(Ops op) : kind_(Kind::Op), i_(0) { op_ = op; }
  Arg(AxisType a) : kind_(Kind::Axis), i_(0) { ax_ = a; }
  explicit Arg(const ArgObj* obj);  // takes a reference
  static Arg invalid();
  static Arg tuple(std::vector<Arg> items);
  template <typename... T>
  static Arg tup(T&&... items) {
    return tuple(std::vector<Arg>{Arg(std::forward<T>(items))...});
  }

  // the union's 16 bytes are copied whole (obj_ among them)
  Arg(const Arg& o) : kind_(o.kind_), i_(o.i_) {
    if (has_obj()) obj_->rc.fetch_add(1, std::memory_order_relaxed);
  }
  Arg(Arg&& o) noexcept : kind_(o.kind_), i_(o.i_) {
    o.kind_ = Kind::None;
    o.i_ = 0;
  }
  Arg& operator=(const Arg& o) {
    if (this == &o) return *this;
    if (o.has_obj()) o.obj_->rc.fetch_add(1, std::memory_order_relaxed);
    if (has_obj()) release();
    kind_ = o.kind_, i_ = o.i_;
    return *this;
  }
  Arg& operator=(Arg&& o) noexcept {
    if (this == &o) return *this;
    if (has_obj()) release();
    kind_ = o.kind_, i_ = o.i_;
    o.kind_ = Kind::None;
    o.i_ = 0;
    return *this;
  }
  ~Arg() {
    if (has_obj()) release();  // only strings, tuples and objects hold a reference
  }

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_const() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool || kind_ == Kind::Invalid; }
  bool is_int() const { return kind_ == Kind::Int; }
  bool is_float() const { return kind_ == Kind::Float; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_invalid() const { return kind_ == Kind::Invalid; }
  bool is_str() const { return kind_ == Kind::Str; }
  bool is_dtype() const { return kind_ == Kind::DType; }
  bool is_tuple() const { return kind_ == Kind::Tuple; }
  bool is_obj() const { return kind_ == Kind::Obj; }

  PyConst as_const() const;  // for int/float/bool/Invalid args
  pyint as_int() const;
  double as_float() const;
  bool as_bool() const;
  const std::string& as_str() const;
  DType as_dtype() const;
  Ops as_op() const;
  AxisType as_axis() const;
  const std::vector<Arg>& items() const;  // tuple items
  size_t size() const { return items().size(); }
  const Arg& operator[](size_t i) const { return items()[i]; }
  const ArgObj* obj() const { return has_obj() ? obj_ : nullptr; }
  template <typename T>
  const T* as() const {
    return kind_ == Kind::Obj ? dynamic_cast<const T*>(obj_) : nullptr;
  }

  size_t hash() const { return kind_ == Kind::None ? 0x1234567 : hash_other(); }
  // strict identity (hash-consing key); None and ints in line
  bool same(const Arg& o) const {
    if (kind_ != o.kind_) return false;
    if (kind_ == Kind::None) return true;
    return kind_ == Kind::Int ? i_ == o.i_ : same_other(o);
  }
  // python ==  (1 == 1.0 == True); two ints in line
  bool py_eq(const Arg& o) const { return kind_ == Kind::Int && o.kind_ == Kind::Int ? i_ == o.i_ : py_eq_other(o); }
  // python ordering (-1/0/1), numbers cross-compare; two ints or two floats in line (a nan compares 0 both ways)
  int py_cmp(const Arg& o) const {
    if (kind_ == o.kind_ && kind_ == Kind::Int) return (i_ > o.i_) - (i_ < o.i_);
    if (kind_ == o.kind_ && kind_ == Kind::Float) return (f_ > o.f_) - (f_ < o.f_);
    return py_cmp_other(o);
  }
  std::string repr() const;          // python repr()
  std::string str() const;           // python str()

 private:
  void release();
  size_t hash_other() const;
  bool same_other(const Arg& o) const;
  bool py_eq_other(const Arg& o) const;
  int py_cmp_other(const Arg& o) const;
  // Str, Tuple and Obj hold obj_ (a reference)
  bool has_obj() const {
    return ((1u << (unsigned)kind_) &
            ((1u << (unsigned)Kind::Str) | (1u << (unsigned)Kind::Tuple) | (1u << (unsigned)Kind::Obj))) != 0;
  }
  Kind kind_;
  union {  // 32 bytes in all: a node holds two args
    pyint i_;
    double f_;
    bool b_;
    const DTypeData* dt_;
    Ops op_;
    AxisType ax_;
    const ArgObj* obj_;  // Str, Tuple, Obj
  };
};

// the arg of PARAM/BUFFER (uop/ops.py ParamArg, an order=True dataclass)
struct ParamArg final : ArgObj {
  int64_t slot = 0;
  DType dtype;
  bool has_vminmax = false;
  PyConst vmin, vmax;
  bool has_multiple_of = false;
  int64_t multiple_of = 0;
  std::string name;  // empty = None
  bool has_name = false;
  bool has_addrspace = true;
  AddrSpace addrspace = AddrSpace::GLOBAL;
  bool has_axis = false;
  int64_t axis = 0;
  Arg device;  // None, str or tuple of str
  bool volatile_ = false;

  size_t hash() const override;
  bool equals(const ArgObj& o) const override;
  int py_cmp(const ArgObj& o) const override;
  std::string repr() const override;
  const char* type_name() const override { return "ParamArg"; }
  Arg to_arg() const { return Arg(new ParamArg(*this)); }
  ParamArg() = default;
  ParamArg(const ParamArg& o)
      : ArgObj(), slot(o.slot), dtype(o.dtype), has_vminmax(o.has_vminmax), vmin(o.vmin), vmax(o.vmax),
        has_multiple_of(o.has_multiple_of), multiple_of(o.multiple_of), name(o.name), has_name(o.has_name),
        has_addrspace(o.has_addrspace), addrspace(o.addrspace), has_axis(o.has_axis), axis(o.axis), device(o.device),
        volatile_(o.volatile_) {}
};


}  // namespace tg
