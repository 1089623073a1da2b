#include "lib/dtype.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <stdexcept>
#include <unordered_map>

#include "lib/helpers.h"
#include "lib/pyfmt.h"

namespace tg {

std::string pyint_str(pyint v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u = neg ? (unsigned __int128)(-(v + 1)) + 1 : (unsigned __int128)v;
  char buf[64];
  int n = 0;
  while (u > 0) {
    buf[n++] = (char)('0' + (int)(u % 10));
    u /= 10;
  }
  std::string s = neg ? "-" : "";
  while (n > 0) s += buf[--n];
  return s;
}

// ***** PyConst *****

pyint PyConst::as_int_other() const {
  switch (kind) {
    case Kind::Int: return i;
    case Kind::Bool: return b ? 1 : 0;
    case Kind::Float: {
      if (!std::isfinite(f)) throw Error("cannot convert float " + py_float_repr(f) + " to integer");
      double t = std::trunc(f);
      if (t >= 1.7e38) return PYINT_MAX;
      if (t <= -1.7e38) return PYINT_MIN;
      return (pyint)t;
    }
    case Kind::Invalid: throw Error("Invalid has no integer value");
  }
  return 0;
}
double PyConst::as_float() const {
  switch (kind) {
    case Kind::Int: return (double)i;
    case Kind::Bool: return b ? 1.0 : 0.0;
    case Kind::Float: return f;
    case Kind::Invalid: throw Error("Invalid has no float value");
  }
  return 0;
}
bool PyConst::truthy() const {
  switch (kind) {
    case Kind::Int: return i != 0;
    case Kind::Bool: return b;
    case Kind::Float: return f != 0;
    case Kind::Invalid: return true;
  }
  return false;
}
std::string PyConst::str() const {
  switch (kind) {
    case Kind::Int: return pyint_str(i);
    case Kind::Bool: return b ? "True" : "False";
    case Kind::Float: return py_float_repr(f);
    case Kind::Invalid: return "Invalid";
  }
  return "";
}
std::string PyConst::repr() const { return str(); }

bool operator==(const PyConst& a, const PyConst& b) {
  if (a.kind == PyConst::Kind::Int && b.kind == PyConst::Kind::Int) return a.i == b.i;  // the common case
  if (a.is_invalid() || b.is_invalid()) return a.is_invalid() && b.is_invalid();
  if (a.is_float() || b.is_float()) {
    double x = a.as_float(), y = b.as_float();
    if (a.is_float() && b.is_float()) return (std::isnan(x) && std::isnan(y)) || x == y;  // ConstFloat: nan == nan
    // python compares int and float exactly
    const PyConst& fl = a.is_float() ? a : b;
    pyint iv = a.is_float() ? b.as_int() : a.as_int();
    double f = fl.f;
    if (!std::isfinite(f) || std::trunc(f) != f || std::fabs(f) >= 1.7e38) return false;
    return (pyint)f == iv;
  }
  return a.as_int() == b.as_int();
}
bool py_lt(const PyConst& a, const PyConst& b) {
  if (a.kind == PyConst::Kind::Int && b.kind == PyConst::Kind::Int) return a.i < b.i;  // the common case
  if (a.is_float() || b.is_float()) return a.as_float() < b.as_float();
  return a.as_int() < b.as_int();
}
bool same_const(const PyConst& a, const PyConst& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case PyConst::Kind::Int: return a.i == b.i;
    case PyConst::Kind::Bool: return a.b == b.b;
    case PyConst::Kind::Float: return std::memcmp(&a.f, &b.f, sizeof(double)) == 0;
    case PyConst::Kind::Invalid: return true;
  }
  return false;
}
size_t hash_const(const PyConst& c) {
  uint64_t h = (uint64_t)c.kind * 0x9E3779B97F4A7C15ull;
  switch (c.kind) {
    case PyConst::Kind::Int: h ^= (uint64_t)c.i ^ (uint64_t)(c.i >> 64) * 31; break;
    case PyConst::Kind::Bool: h ^= c.b; break;
    case PyConst::Kind::Float: {
      uint64_t bits;
      std::memcpy(&bits, &c.f, 8);
      h ^= bits;
      break;
    }
    case PyConst::Kind::Invalid: break;
  }
  return (size_t)(h * 0xff51afd7ed558ccdull);
}

pyint sat_add(pyint a, pyint b) {
  pyint r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? PYINT_MAX : PYINT_MIN;
  return r;
}
pyint sat_sub(pyint a, pyint b) {
  pyint r;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? PYINT_MAX : PYINT_MIN;
  return r;
}
pyint sat_mul(pyint a, pyint b) {
  pyint r;
  if (__builtin_mul_overflow(a, b, &r)) return ((a < 0) != (b < 0)) ? PYINT_MIN : PYINT_MAX;
  return r;
}
static bool both_intlike(const PyConst& a, const PyConst& b) { return !a.is_float() && !b.is_float(); }
PyConst py_add(const PyConst& a, const PyConst& b) {
  if (both_intlike(a, b)) return PyConst(sat_add(a.as_int(), b.as_int()));
  return PyConst(a.as_float() + b.as_float());
}
PyConst py_sub(const PyConst& a, const PyConst& b) {
  if (both_intlike(a, b)) return PyConst(sat_sub(a.as_int(), b.as_int()));
  return PyConst(a.as_float() - b.as_float());
}
PyConst py_mul(const PyConst& a, const PyConst& b) {
  if (both_intlike(a, b)) return PyConst(sat_mul(a.as_int(), b.as_int()));
  return PyConst(a.as_float() * b.as_float());
}
PyConst py_neg(const PyConst& a) {
  if (a.is_float()) return PyConst(-a.f);
  return PyConst(sat_sub(0, a.as_int()));
}
// python min/max keep the first of equal elements
PyConst py_min(const PyConst& a, const PyConst& b) { return py_lt(b, a) ? b : a; }
PyConst py_max(const PyConst& a, const PyConst& b) { return py_lt(a, b) ? b : a; }

pyint floordiv(pyint x, pyint y) {
  if (y == 0) return 0;
  if (x == PYINT_MIN && y == -1) return PYINT_MAX;
  pyint q = x / y;
  if ((x % y != 0) && ((x < 0) != (y < 0))) q -= 1;
  return q;
}
pyint floormod(pyint x, pyint y) { return sat_sub(x, sat_mul(floordiv(x, y), y)); }
pyint cdiv(pyint x, pyint y) {
  if (y == 0) return 0;
  if (x == PYINT_MIN && y == -1) return PYINT_MAX;
  return x / y;
}
pyint cmod(pyint x, pyint y) { return sat_sub(x, sat_mul(cdiv(x, y), y)); }

const char* addrspace_name(AddrSpace a) {
  switch (a) {
    case AddrSpace::GLOBAL: return "GLOBAL";
    case AddrSpace::LOCAL: return "LOCAL";
    case AddrSpace::REG: return "REG";
    case AddrSpace::ALU: return "ALU";
  }
  return "?";
}

// ***** dtype table *****

static const DTypeData kDTypes[] = {
    {-1, 0, "void", 0, "void", 0},
    {0, 800, "weakint", 0, "weakint", 1},
    {0, 1, "bool", '?', "bool", 2},
    {1, 8, "signed char", 'b', "char", 3},
    {2, 8, "unsigned char", 'B', "uchar", 4},
    {3, 16, "short", 'h', "short", 5},
    {4, 16, "unsigned short", 'H', "ushort", 6},
    {5, 32, "int", 'i', "int", 7},
    {6, 32, "unsigned int", 'I', "uint", 8},
    {7, 64, "long", 'q', "long", 9},
    {8, 64, "unsigned long", 'Q', "ulong", 10},
    {8, 128, "uint128", 0, "_uint128", 11},
    {8, 256, "uint256", 0, "_uint256", 12},
    {9, 800, "weakfloat", 0, "weakfloat", 13},
    {10, 8, "float8_e4m3", 0, "fp8e4m3", 14},
    {11, 8, "float8_e5m2", 0, "fp8e5m2", 15},
    {10, 8, "float8_e4m3fnuz", 0, "fp8e4m3fnuz", 16},
    {11, 8, "float8_e5m2fnuz", 0, "fp8e5m2fnuz", 17},
    {12, 16, "half", 'e', "half", 18},
    {13, 16, "__bf16", 0, "bfloat16", 19},
    {14, 32, "float", 'f', "float", 20},
    {15, 64, "double", 'd', "double", 21},
};

namespace dtypes {
const DType void_(&kDTypes[0]), weakint(&kDTypes[1]), bool_(&kDTypes[2]), int8(&kDTypes[3]), uint8(&kDTypes[4]),
    int16(&kDTypes[5]), uint16(&kDTypes[6]), int32(&kDTypes[7]), uint32(&kDTypes[8]), int64(&kDTypes[9]),
    uint64(&kDTypes[10]), uint128(&kDTypes[11]), uint256(&kDTypes[12]), weakfloat(&kDTypes[13]),
    fp8e4m3(&kDTypes[14]), fp8e5m2(&kDTypes[15]), fp8e4m3fnuz(&kDTypes[16]), fp8e5m2fnuz(&kDTypes[17]),
    float16(&kDTypes[18]), bfloat16(&kDTypes[19]), float32(&kDTypes[20]), float64(&kDTypes[21]);
const DType half = float16, float_ = float32, double_ = float64, uchar = uint8, ushort = uint16, uint = uint32,
            ulong = uint64, char_ = int8, short_ = int16, int_ = int32, long_ = int64;
const DTypes fp8s = {fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz};
const DTypes floats = {fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz, float16, bfloat16, float32, float64};
const DTypes uints = {uint8, uint16, uint32, uint64};
const DTypes sints = {int8, int16, int32, int64};
const DTypes ints = {uint8, uint16, uint32, uint64, int8, int16, int32, int64};
const DTypes weaks = {weakint, weakfloat};
const DTypes all = {fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz, float16, bfloat16, float32, float64,
                    uint8,   uint16,  uint32,      uint64,      int8,    int16,    int32,   int64,   bool_};

static int float_mask_bit(DType d) { return d.id(); }
bool is_float(DType d) {
  int id = float_mask_bit(d);
  return id == 13 || (id >= 14 && id <= 21);
}
bool is_int(DType d) {
  int id = d.id();
  return id == 1 || (id >= 3 && id <= 10);
}
bool is_unsigned(DType d) {
  int id = d.id();
  return id == 4 || id == 6 || id == 8 || id == 10;
}
DType default_float() {
  static DType d = by_name(getenv_str("DEFAULT_FLOAT", "float32"));
  return d;
}
DType default_int() {
  static DType d = by_name(getenv_str("DEFAULT_INT", "int32"));
  return d;
}
DType from_py(const PyConst& c) {
  if (c.is_bool() || c.is_invalid()) return bool_;
  if (c.is_float()) return weakfloat;
  return weakint;
}
DType by_name(const std::string& attr) {
  static const std::map<std::string, DType> names = {
      {"void", void_},       {"weakint", weakint},     {"bool", bool_},       {"int8", int8},
      {"uint8", uint8},      {"int16", int16},         {"uint16", uint16},    {"int32", int32},
      {"uint32", uint32},    {"int64", int64},         {"uint64", uint64},    {"weakfloat", weakfloat},
      {"fp8e4m3", fp8e4m3},  {"fp8e5m2", fp8e5m2},     {"fp8e4m3fnuz", fp8e4m3fnuz},
      {"fp8e5m2fnuz", fp8e5m2fnuz},                    {"float16", float16},  {"bfloat16", bfloat16},
      {"float32", float32},  {"float64", float64},     {"half", half},        {"float", float_},
      {"double", double_},   {"uchar", uchar},         {"ushort", ushort},    {"uint", uint},
      {"ulong", ulong},      {"char", char_},          {"short", short_},     {"int", int_},
      {"long", long_},       {"_uint128", uint128},    {"_uint256", uint256}};
  std::string k = attr;
  std::transform(k.begin(), k.end(), k.begin(), ::tolower);
  auto it = names.find(k);
  if (it == names.end()) throw Error("unknown dtype '" + attr + "'");
  return it->second;
}
const std::vector<DType>& every() {
  static std::vector<DType> v = [] {
    std::vector<DType> r;
    for (const auto& d : kDTypes) r.push_back(DType(&d));
    return r;
  }();
  return v;
}
}  // namespace dtypes

DTypes operator+(const DTypes& a, const DTypes& b) {
  DTypes r = a;
  r.insert(r.end(), b.begin(), b.end());
  return r;
}

std::string DType::repr() const { return std::string("dtypes.") + d_->attr; }

PyConst DType::min() const {
  if (dtypes::is_int(*this)) {
    if (dtypes::is_unsigned(*this)) return PyConst(0);
    if (bitsize() >= 128) return PyConst(PYINT_MIN);
    return PyConst(-((pyint)1 << (bitsize() - 1)));
  }
  if (dtypes::is_float(*this)) return PyConst(-std::numeric_limits<double>::infinity());
  return PyConst(false);
}
PyConst DType::max() const {
  if (dtypes::is_int(*this)) {
    if (bitsize() >= 128) return PyConst(PYINT_MAX);
    pyint range = (pyint)1 << bitsize();
    return PyConst(range - 1 + min().i);
  }
  if (dtypes::is_float(*this)) return PyConst(std::numeric_limits<double>::infinity());
  return PyConst(true);
}
bool DType::operator<(const DType& o) const {
  if (priority() != o.priority()) return priority() < o.priority();
  if (bitsize() != o.bitsize()) return bitsize() < o.bitsize();
  int c = std::strcmp(name(), o.name());
  if (c != 0) return c < 0;
  return fmt() < o.fmt();
}

PyConst DType::const_(const PyConst& v) const {
  if (v.is_invalid()) return v;
  if (dtypes::is_float(*this)) {
    double f = v.as_float();
    if (std::isnan(f)) f = std::numeric_limits<double>::quiet_NaN();
    return has_truncate(*this) ? truncate(*this, PyConst(f)) : PyConst(f);
  }
  if (dtypes::is_bool(*this)) return PyConst(v.truthy());
  return PyConst(v.as_int());
}

DType strong_dtype(DType d) {
  if (d == dtypes::weakint) return dtypes::default_int();
  if (d == dtypes::weakfloat) return dtypes::default_float();
  return d;
}
DType weak_dtype(DType d) {
  if (dtypes::is_float(d)) return dtypes::weakfloat;
  if (dtypes::is_int(d)) return dtypes::weakint;
  return d;
}

// promo_lattice parents; float64 is the top
static const std::vector<DType>& lattice_parents(DType d) {
  using namespace dtypes;
  static std::map<int, std::vector<DType>> lat = {
      {bool_.id(), {weakint}},
      {weakint.id(), {int8, uint8}},
      {int8.id(), {int16}},
      {int16.id(), {int32}},
      {int32.id(), {int64}},
      {int64.id(), {weakfloat}},
      {uint8.id(), {int16, uint16}},
      {uint16.id(), {int32, uint32}},
      {uint32.id(), {int64, uint64}},
      {uint64.id(), {weakfloat}},
      {weakfloat.id(), {fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz}},
      {fp8e4m3.id(), {float16, bfloat16}},
      {fp8e5m2.id(), {float16, bfloat16}},
      {fp8e4m3fnuz.id(), {float16, bfloat16}},
      {fp8e5m2fnuz.id(), {float16, bfloat16}},
      {float16.id(), {float32}},
      {bfloat16.id(), {float32}},
      {float32.id(), {float64}},
  };
  static std::vector<DType> none;
  auto it = lat.find(d.id());
  if (it == lat.end()) {
    if (d == float64) return none;
    throw Error("dtype " + d.repr() + " is not in the promotion lattice");
  }
  return it->second;
}

static uint64_t recursive_parents(DType d) {
  static uint64_t cache[32] = {0};
  static std::once_flag once;
  std::call_once(once, [] {
    // fixed point over the lattice (ids < 32)
    bool changed = true;
    for (DType x : dtypes::every()) cache[x.id()] = 1ull << x.id();
    while (changed) {
      changed = false;
      for (DType x : dtypes::every()) {
        if (x == dtypes::void_ || x == dtypes::uint128 || x == dtypes::uint256) continue;
        uint64_t m = cache[x.id()];
        for (DType p : lattice_parents(x)) m |= cache[p.id()];
        if (m != cache[x.id()]) cache[x.id()] = m, changed = true;
      }
    }
  });
  return cache[d.id()];
}

static DType least_upper_of(std::span<const DType> ds) {
  // the answer depends on the set of dtypes only: remembered per set (a bit per dtype id), per thread
  uint64_t key = 0;
  for (DType d : ds) key |= 1ull << d.id();
  thread_local std::unordered_map<uint64_t, DType> memo;
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  uint64_t m = ~0ull;
  for (DType d : ds) {
    if (d == dtypes::void_ || d == dtypes::uint128 || d == dtypes::uint256)
      throw Error("dtype " + d.repr() + " is not in the promotion lattice");
    m &= recursive_parents(d);
  }
  DType best;
  for (DType d : dtypes::every())
    if (m & (1ull << d.id()))
      if (!best || d < best) best = d;
  memo.emplace(key, best);
  return best;
}
DType least_upper_dtype(const std::vector<DType>& ds) { return least_upper_of(ds); }
DType least_upper_dtype(std::span<const DType> ds) { return least_upper_of(ds); }
DType least_upper_dtype(std::initializer_list<DType> ds) { return least_upper_of({ds.begin(), ds.size()}); }
DType least_upper_float(DType d) {
  if (d == dtypes::weakint) return dtypes::weakfloat;
  if (dtypes::is_float(d)) return d;
  return least_upper_dtype({d, dtypes::default_float()});
}

bool can_lossless_cast(DType dt0, DType dt1) {
  using namespace dtypes;
  if (dt0 == dt1 || dt0 == bool_) return true;
  auto in = [&](std::initializer_list<DType> l) {
    for (DType x : l)
      if (x == dt0) return true;
    return false;
  };
  if (dt1 == weakint) return contains(ints, dt0);
  if (dt1 == float64)
    return in({float32, float16, bfloat16, fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz, uint32, uint16, uint8, int32,
               int16, int8});
  if (dt1 == float32) return in({float16, bfloat16, fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz, uint16, uint8, int16, int8});
  if (dt1 == float16) return in({fp8e4m3, fp8e5m2, fp8e4m3fnuz, fp8e5m2fnuz, uint8, int8});
  if (dt1 == uint64) return in({uint32, uint16, uint8});
  if (dt1 == uint32) return in({uint16, uint8});
  if (dt1 == uint16) return in({uint8});
  if (dt1 == int64) return in({uint32, uint16, uint8, int32, int16, int8});
  if (dt1 == int32) return in({uint16, uint8, int16, int8});
  if (dt1 == int16) return in({uint8, int8});
  return false;
}

DType sum_acc_dtype(DType d) {
  if (dtypes::is_unsigned(d)) return least_upper_dtype({d, dtypes::uint32});
  if (dtypes::is_int(d) || d == dtypes::bool_) return least_upper_dtype({d, dtypes::int32});
  return least_upper_dtype({d, dtypes::by_name(getenv_str("SUM_DTYPE", "float32"))});
}

// ***** storage conversions *****

float float_to_fp16(double x) {
  // struct.pack('e') semantics: round to nearest even, overflow -> inf (the reference maps OverflowError to inf)
  _Float16 h = (_Float16)x;
  return (float)h;
}

double float_to_bf16(double x) {
  if (!std::isfinite(x)) return x;
  float f = (float)x;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000u;
  std::memcpy(&f, &u, 4);
  return f;
}

struct Fp8Cfg {
  int bias, sig_bits;
  uint64_t mant_mask, min_denorm_half, ovf_threshold;
  int max_norm;
  uint64_t min_norm;
};
static const Fp8Cfg& fp8_cfg(DType d) {
  static const Fp8Cfg e4m3{7, 4, 0x7, 0x3F50000000000000ull, 0x407D000000000000ull, 0x7E, 0x3F90000000000000ull};
  static const Fp8Cfg e5m2{15, 3, 0x3, 0x3EE0000000000000ull, 0x40EE000000000000ull - 1, 0x7B, 0x3F10000000000000ull};
  static const Fp8Cfg e4m3fnuz{8, 4, 0x7, 0x3F40000000000000ull, 0x406F000000000000ull - 1, 0x7F, 0x3F80000000000000ull};
  static const Fp8Cfg e5m2fnuz{16, 3, 0x3, 0x3ED0000000000000ull, 0x40EE000000000000ull - 1, 0x7F, 0x3F00000000000000ull};
  if (d == dtypes::fp8e4m3) return e4m3;
  if (d == dtypes::fp8e5m2) return e5m2;
  if (d == dtypes::fp8e4m3fnuz) return e4m3fnuz;
  if (d == dtypes::fp8e5m2fnuz) return e5m2fnuz;
  throw Error("not an fp8 dtype: " + d.repr());
}
static bool is_fnuz(DType d) { return d == dtypes::fp8e4m3fnuz || d == dtypes::fp8e5m2fnuz; }

int float_to_fp8(double x, DType dtype) {
  if (is_fnuz(dtype) && !std::isfinite(x)) return 0x80;
  if (is_fnuz(dtype) && x == 0.0) return 0x00;
  if (dtype == dtypes::fp8e4m3 && !std::isfinite(x)) return std::copysign(1.0, x) > 0 ? 0x7f : 0xff;
  if (dtype == dtypes::fp8e5m2 && !std::isfinite(x))
    return (std::copysign(1.0, x) > 0 ? 0 : 0x80) | (std::isinf(x) ? 0x7c : 0x7f);
  const Fp8Cfg& c = fp8_cfg(dtype);
  uint64_t xbits;
  std::memcpy(&xbits, &x, 8);
  uint64_t half_ulp = 1ull << (52 - c.sig_bits);
  int sign = (int)(((xbits >> 63) & 1) << 7);
  int64_t exp = (int64_t)((xbits >> 52) & 0x7FF) - 1023 + c.bias;
  uint64_t mantissa = (xbits >> (53 - c.sig_bits)) & c.mant_mask;
  uint64_t absx = xbits & 0x7FFFFFFFFFFFFFFFull;
  int64_t res;
  if (absx <= c.min_denorm_half) res = 0;
  else if (absx > c.ovf_threshold) res = c.max_norm;
  else if (absx >= c.min_norm) {
    res = (exp << (c.sig_bits - 1)) | (int64_t)mantissa;
    uint64_t round_bits = xbits & ((half_ulp << 1) - 1);
    if (round_bits > half_ulp || (round_bits == half_ulp && (mantissa & 1))) res += 1;
  } else {
    int64_t shift = 1 - exp;
    mantissa |= 1ull << (c.sig_bits - 1);
    res = (int64_t)(mantissa >> shift);
    uint64_t half = half_ulp << shift;
    uint64_t round_bits = (xbits | (1ull << 52)) & ((half << 1) - 1);
    if (round_bits > half || (round_bits == half && (res & 1))) res += 1;
  }
  return (is_fnuz(dtype) && res == 0) ? 0 : (int)(res | sign);
}

double fp8_to_float(int x, DType dtype) {
  if (is_fnuz(dtype) && x == 0x80) return std::nan("");
  if ((x & 0x7F) == 0) return (x & 0x80) ? -0.0 : 0.0;
  const Fp8Cfg& c = fp8_cfg(dtype);
  int mant_bits = c.sig_bits - 1, exp_bits = 8 - c.sig_bits;
  int exp_max = (1 << exp_bits) - 1, mant_max = (1 << mant_bits) - 1;
  int sign = (x >> 7) & 1, exp = (x >> mant_bits) & exp_max, mantissa = x & mant_max;
  if (!is_fnuz(dtype) && exp == exp_max) {
    if (dtype == dtypes::fp8e5m2)
      return std::copysign(mantissa ? std::nan("") : std::numeric_limits<double>::infinity(), sign ? -1.0 : 1.0);
    if (mantissa == mant_max) return std::nan("");
  }
  double val = exp == 0 ? ((double)mantissa / (mant_max + 1)) * std::ldexp(1.0, 1 - c.bias)
                        : (1 + (double)mantissa / (mant_max + 1)) * std::ldexp(1.0, exp - c.bias);
  return sign ? -val : val;
}

bool has_truncate(DType d) {
  using namespace dtypes;
  return d == bool_ || d == float16 || d == bfloat16 || contains(fp8s, d) || d == float32 || d == float64 || d == int8 ||
         d == int16 || d == int32 || d == int64 || d == uint8 || d == uint16 || d == uint32 || d == uint64;
}

template <typename T>
static pyint wrap_int(pyint v) {
  return (pyint)(T)(unsigned __int128)v;
}

PyConst truncate(DType d, const PyConst& v) {
  using namespace dtypes;
  if (v.is_invalid()) return v;
  if (d == bool_) return PyConst(v.truthy());
  if (d == float16) return PyConst((double)float_to_fp16(v.as_float()));
  if (d == bfloat16) return PyConst(float_to_bf16(v.as_float()));
  if (contains(fp8s, d)) return PyConst(fp8_to_float(float_to_fp8(v.as_float(), d), d));
  if (d == float32) return PyConst((double)(float)v.as_float());
  if (d == float64) return PyConst(v.as_float());
  // ctypes c_int*(x).value: floats truncate toward zero first, then wrap
  if (!has_truncate(d)) return v;
  pyint i = v.as_int();
  if (d == int8) return PyConst(wrap_int<int8_t>(i));
  if (d == int16) return PyConst(wrap_int<int16_t>(i));
  if (d == int32) return PyConst(wrap_int<int32_t>(i));
  if (d == int64) return PyConst(wrap_int<int64_t>(i));
  if (d == uint8) return PyConst(wrap_int<uint8_t>(i));
  if (d == uint16) return PyConst(wrap_int<uint16_t>(i));
  if (d == uint32) return PyConst(wrap_int<uint32_t>(i));
  if (d == uint64) return PyConst(wrap_int<uint64_t>(i));
  return v;
}

PyConst bitcast(const PyConst& x, DType in, DType out) {
  if (in.itemsize() != out.itemsize()) throw Error("bitcast itemsize mismatch");
  uint64_t bits = 0;
  // to storage
  if (in == dtypes::float16) {
    _Float16 h = (_Float16)x.as_float();
    std::memcpy(&bits, &h, 2);
  } else if (in == dtypes::bfloat16) {
    float f = (float)float_to_bf16(x.as_float());
    uint32_t u;
    std::memcpy(&u, &f, 4);
    bits = u >> 16;
  } else if (contains(dtypes::fp8s, in)) {
    bits = (uint64_t)float_to_fp8(x.as_float(), in);
  } else if (in == dtypes::float32) {
    float f = (float)x.as_float();
    std::memcpy(&bits, &f, 4);
  } else if (in == dtypes::float64) {
    double f = x.as_float();
    std::memcpy(&bits, &f, 8);
  } else if (in == dtypes::bool_) {
    bits = x.truthy();
  } else {
    bits = (uint64_t)x.as_int();
  }
  int nb = out.itemsize() * 8;
  if (nb < 64) bits &= (1ull << nb) - 1;
  // from storage
  if (out == dtypes::float16) {
    _Float16 h;
    uint16_t u = (uint16_t)bits;
    std::memcpy(&h, &u, 2);
    return PyConst((double)h);
  }
  if (out == dtypes::bfloat16) {
    uint32_t u = (uint32_t)(bits & 0xFFFF) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return PyConst((double)f);
  }
  if (contains(dtypes::fp8s, out)) return PyConst(fp8_to_float((int)bits, out));
  if (out == dtypes::float32) {
    uint32_t u = (uint32_t)bits;
    float f;
    std::memcpy(&f, &u, 4);
    return PyConst((double)f);
  }
  if (out == dtypes::float64) {
    double f;
    std::memcpy(&f, &bits, 8);
    return PyConst(f);
  }
  if (out == dtypes::bool_) return PyConst(bits != 0);
  return truncate(out, PyConst((pyint)bits));
}

}  // namespace tg
