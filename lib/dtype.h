// Port of tinygrad/dtype.py: interned DTypes, the promotion lattice, python-valued constants (PyConst).
#pragma once
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace tg {

using pyint = __int128;  // python ints: wide enough for every dtype bound; vmin/vmax saturate instead of wrapping
constexpr pyint PYINT_MAX = (pyint)(~(unsigned __int128)0 >> 1);
constexpr pyint PYINT_MIN = -PYINT_MAX - 1;
std::string pyint_str(pyint v);

// A python scalar as used for CONST args and vmin/vmax: int, float, bool or the Invalid singleton.
// Equality follows tinygrad: floats compare by value with nan == nan (ConstFloat); ints/floats/bools compare numerically.
struct PyConst {
  enum class Kind : uint8_t { Int, Float, Bool, Invalid };
  Kind kind = Kind::Int;
  union {
    pyint i;
    double f;
    bool b;
  };
  PyConst() : i(0) {}
  PyConst(pyint v) : kind(Kind::Int), i(v) {}
  PyConst(int v) : kind(Kind::Int), i(v) {}
  PyConst(long v) : kind(Kind::Int), i(v) {}
  PyConst(long long v) : kind(Kind::Int), i(v) {}
  PyConst(unsigned long v) : kind(Kind::Int), i(v) {}
  PyConst(double v) : kind(Kind::Float), f(v) {}
  PyConst(bool v) : kind(Kind::Bool), i(0) { b = v; }
  static PyConst invalid() {
    PyConst r;
    r.kind = Kind::Invalid;
    return r;
  }
  bool is_int() const { return kind == Kind::Int; }
  bool is_float() const { return kind == Kind::Float; }
  bool is_bool() const { return kind == Kind::Bool; }
  bool is_invalid() const { return kind == Kind::Invalid; }
  bool is_number() const { return kind != Kind::Invalid; }
  pyint as_int_other() const;  // as_int of a bool, float or Invalid
  // python numeric views (bool -> 0/1)
  pyint as_int() const { return kind == Kind::Int ? i : as_int_other(); }  // int(x) (floats truncate)
  double as_float() const;
  bool truthy() const;    // bool(x)
  std::string str() const;   // python str(): 1, 1.0, True, inf, nan, Invalid
  std::string repr() const;  // same as str for these types
};
bool operator==(const PyConst& a, const PyConst& b);  // python ==
inline bool operator!=(const PyConst& a, const PyConst& b) { return !(a == b); }
bool py_lt(const PyConst& a, const PyConst& b);        // python <  (numbers only)
bool same_const(const PyConst& a, const PyConst& b);   // identity for hash-consing: same kind and bits
size_t hash_const(const PyConst& c);

// python arithmetic on PyConst (numbers). ints saturate at the pyint range instead of overflowing.
PyConst py_add(const PyConst& a, const PyConst& b);
PyConst py_sub(const PyConst& a, const PyConst& b);
PyConst py_mul(const PyConst& a, const PyConst& b);
PyConst py_neg(const PyConst& a);
PyConst py_min(const PyConst& a, const PyConst& b);
PyConst py_max(const PyConst& a, const PyConst& b);
pyint sat_add(pyint a, pyint b);
pyint sat_sub(pyint a, pyint b);
pyint sat_mul(pyint a, pyint b);
pyint floordiv(pyint x, pyint y);  // helpers.floordiv: python //, 0 when y == 0
pyint floormod(pyint x, pyint y);
pyint cdiv(pyint x, pyint y);      // truncating division, 0 when y == 0
pyint cmod(pyint x, pyint y);

enum class AddrSpace : uint8_t { GLOBAL = 1, LOCAL, REG, ALU };
const char* addrspace_name(AddrSpace a);

struct DTypeData {
  int priority;
  int bitsize;
  const char* name;   // C name ("float", "unsigned char")
  char fmt;           // struct format char, 0 when none
  const char* attr;   // the dtypes.<attr> used by repr
  int id;             // dense index
};

// An interned dtype; compares by identity like the reference.
class DType {
 public:
  constexpr DType() : d_(nullptr) {}
  constexpr explicit DType(const DTypeData* d) : d_(d) {}
  const DTypeData* data() const { return d_; }
  bool operator==(const DType& o) const { return d_ == o.d_; }
  bool operator!=(const DType& o) const { return d_ != o.d_; }
  explicit operator bool() const { return d_ != nullptr; }
  int priority() const { return d_->priority; }
  int bitsize() const { return d_->bitsize; }
  int itemsize() const { return (d_->bitsize + 7) / 8; }
  const char* name() const { return d_->name; }
  char fmt() const { return d_->fmt; }
  int id() const { return d_->id; }
  std::string repr() const;  // "dtypes.float"
  PyConst min() const;
  PyConst max() const;
  PyConst const_(const PyConst& v) const;  // DType.const: canonicalize a value to this dtype (truncate floats)
  bool operator<(const DType& o) const;     // (priority, bitsize, name, fmt)

 private:
  const DTypeData* d_;
};

// a small ordered set of dtypes (UPat dtype tuples, dtype groups)
using DTypes = std::vector<DType>;

namespace dtypes {
extern const DType void_, weakint, bool_, int8, uint8, int16, uint16, int32, uint32, int64, uint64, uint128, uint256,
    weakfloat, fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz, float16, bfloat16, float32, float64;
// aliases
extern const DType half, float_, double_, uchar, ushort, uint, ulong, char_, short_, int_, long_;
extern const DTypes fp8s, floats, uints, sints, ints, weaks, all;
bool is_float(DType d);
bool is_int(DType d);
bool is_unsigned(DType d);
inline bool is_bool(DType d) { return d == bool_; }
DType default_float();
DType default_int();
DType from_py(const PyConst& c);
DType by_name(const std::string& attr);  // "float32", "float", "int", ... (the dtypes.<attr> names)
const std::vector<DType>& every();        // every interned dtype, by id
}  // namespace dtypes

DTypes operator+(const DTypes& a, const DTypes& b);
inline bool contains(const DTypes& s, DType d) {
  for (DType x : s)
    if (x == d) return true;
  return false;
}

DType strong_dtype(DType d);
DType weak_dtype(DType d);
DType least_upper_dtype(std::initializer_list<DType> ds);
DType least_upper_dtype(const std::vector<DType>& ds);
DType least_upper_dtype(std::span<const DType> ds);
DType least_upper_float(DType d);
bool can_lossless_cast(DType dt0, DType dt1);
DType sum_acc_dtype(DType d);

// value conversion into a dtype's storage (the reference's `truncate` table); returns v unchanged for dtypes without one
PyConst truncate(DType d, const PyConst& v);
bool has_truncate(DType d);
float float_to_fp16(double x);
double float_to_bf16(double x);
int float_to_fp8(double x, DType d);
double fp8_to_float(int x, DType d);
PyConst bitcast(const PyConst& x, DType in, DType out);

}  // namespace tg
