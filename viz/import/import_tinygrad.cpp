#include "viz/import/import_tinygrad.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lib/pyfmt.h"
#include "viz/reader/argfmt.h"
#include "viz/import/pickle.h"
#include "viz/reader/reader.h"
#include "viz/reader/replay.h"
#include "viz/schema.h"

namespace tg::viz {

namespace {

using pickle::Kind;
using pickle::kNoValue;
using pickle::Pickle;

// the engine's dtypes (lib/dtype.cpp): the reference's DType(priority, bitsize, name, fmt) by name -> the id and
// dtypes.<attr> the port's writer stores
struct DT {
  const char* name;
  const char* attr;
  int id, itemsize;
};
constexpr DT kDTypes[] = {
    {"void", "void", 0, 0},
    {"weakint", "weakint", 1, 100},
    {"bool", "bool", 2, 1},
    {"signed char", "char", 3, 1},
    {"unsigned char", "uchar", 4, 1},
    {"short", "short", 5, 2},
    {"unsigned short", "ushort", 6, 2},
    {"int", "int", 7, 4},
    {"unsigned int", "uint", 8, 4},
    {"long", "long", 9, 8},
    {"unsigned long", "ulong", 10, 8},
    {"uint128", "_uint128", 11, 16},
    {"uint256", "_uint256", 12, 32},
    {"weakfloat", "weakfloat", 13, 100},
    {"float8_e4m3", "fp8e4m3", 14, 1},
    {"float8_e5m2", "fp8e5m2", 15, 1},
    {"float8_e4m3fnuz", "fp8e4m3fnuz", 16, 1},
    {"float8_e5m2fnuz", "fp8e5m2fnuz", 17, 1},
    {"half", "half", 18, 2},
    {"__bf16", "bfloat16", 19, 2},
    {"float", "float", 20, 4},
    {"double", "double", 21, 8},
};
const char* const kAxisTypes[] = {nullptr,  "DEVICE", "GLOBAL", "WARP",   "LOCAL",       "WEAK", "GROUP_REDUCE",
                                  "REDUCE", "UPCAST", "UNROLL", "THREAD", "PLACEHOLDER", "LOOP"};
const char* const kAddrSpaces[] = {nullptr, "GLOBAL", "LOCAL", "REG", "ALU"};
const char* const kOptOps[] = {nullptr, "TC",       "UPCAST",   "UNROLL", "LOCAL", "THREAD",
                               "GROUP", "GROUPTOP", "NOLOCALS", "PADTO",  "SWAP"};

constexpr int kMaxNesting = kMaxArgNesting;
constexpr size_t kMaxArgBytes = 64u << 20;  // one encoded arg (a kernel's source, its binary's repr)

std::string read_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw ImportError("cannot read '" + path + "': " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw ImportError("'" + path + "' is a directory, not a pickle");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ImportError("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string hex_double(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)bits);
  return buf;
}

// "51847370177.184" (a Decimal of microseconds) -> ns; also the exponent form ("1.5E+3")
bool decimal_us_to_ns(const std::string& s, int64_t& out) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  std::string digits;
  int frac = 0;
  bool dot = false, any = false;
  for (; i < s.size(); i++) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      digits += c, any = true;
      if (dot) frac++;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!any) return false;
  int exp = 0;
  if (i < s.size() && (s[i] == 'E' || s[i] == 'e')) {
    i++;
    bool eneg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
    size_t st = i;
    while (i < s.size() && isdigit((unsigned char)s[i]) && i - st < 6) exp = exp * 10 + (s[i++] - '0');
    if (i == st) return false;
    if (eneg) exp = -exp;
  }
  if (i != s.size()) return false;
  int shift = exp + 3 - frac;  // value = digits * 10^(exp - frac) us = digits * 10^shift ns
  __int128 v = 0;
  for (char c : digits) {
    v = v * 10 + (c - '0');
    if (v > ((__int128)1 << 100)) return false;
  }
  for (; shift > 0; shift--) {
    v *= 10;
    if (v > ((__int128)1 << 100)) return false;
  }
  for (; shift < 0; shift++) v /= 10;
  if (v > ((__int128)1 << 61)) return false;
  out = neg ? -(int64_t)v : (int64_t)v;
  return true;
}

// the path relative to the reference checkout: "/work/tinygrad/tinygrad/uop/ops.py" -> root "/work/tinygrad",
// "tinygrad/uop/ops.py"
std::pair<std::string, std::string> split_root(const std::string& path) {
  size_t k = path.rfind("/tinygrad/");
  if (k == std::string::npos || path.empty() || path[0] != '/') return {"", path};
  return {path.substr(0, k), path.substr(k + 1)};
}

class Importer {
 public:
  Importer(const ImportOptions& o) : opt_(o) {}
  ImportSummary run();

 private:
  const ImportOptions& opt_;
  ImportSummary sum_;
  std::string tmp_path_;
  sqlite3* db_ = nullptr;
  // the pickle being read, and its file's name for the errors
  const Pickle* P = nullptr;
  std::string file_;
  std::string where_;  // what is being read ("uop_fields[17]")

  [[noreturn]] void fail(const std::string& what) const {
    throw ImportError("'" + file_ + "': " + (where_.empty() ? "" : where_ + ": ") + what);
  }

  // ***** values *****
  const pickle::Value& V(uint32_t v) const {
    if (v == kNoValue) fail("a field is missing");
    return P->at(v);
  }
  std::string S(uint32_t v) const { return std::string(P->str(v)); }  // a Str's, Bytes', BigInt's or Global's bytes
  // every container read costs its size: a file whose records all name one huge list would otherwise take
  // quadratic time. A real trace reads each of its values a few times
  mutable uint64_t work_ = 0, work_max_ = 0;
  const std::vector<uint32_t>& I(uint32_t v) const {
    const std::vector<uint32_t>& it = P->items(v);
    if ((work_ += it.size() + 1) > work_max_)
      fail("reads its values over and over (more than " + std::to_string(work_max_) +
           " items for a file of this size): not a trace the reference wrote");
    return it;
  }
  std::string kind_name(uint32_t v) const {
    const pickle::Value& x = V(v);
    switch (x.kind) {
      case Kind::None:
        return "None";
      case Kind::Bool:
        return "a bool";
      case Kind::Int:
      case Kind::BigInt:
        return "an int";
      case Kind::Float:
        return "a float";
      case Kind::Str:
        return "a str";
      case Kind::Bytes:
        return "bytes";
      case Kind::Tuple:
        return "a tuple";
      case Kind::List:
        return "a list";
      case Kind::Dict:
        return "a dict";
      case Kind::Set:
      case Kind::FrozenSet:
        return "a set";
      case Kind::Global:
        return "the class " + S(v);
      case Kind::Object:
        return "a " + std::string(P->class_of(v));
    }
    return "?";
  }
  bool is_obj(uint32_t v, const char* cls) const { return v != kNoValue && P->class_of(v) == cls; }
  uint32_t need_obj(uint32_t v, const char* cls, const char* what) const {
    if (!is_obj(v, cls)) fail(std::string(what) + " is " + kind_name(v) + ", not a " + cls);
    return v;
  }
  uint32_t field(uint32_t obj, const char* name) const {
    uint32_t f = P->field(obj, name);
    if (f == kNoValue) fail(std::string(P->class_of(obj)) + " without its field '" + name + "'");
    return f;
  }
  int64_t as_int(uint32_t v, const char* what) const {
    const pickle::Value& x = V(v);
    if (x.kind == Kind::Int) return x.i;
    if (x.kind == Kind::Bool) return x.b;
    fail(std::string(what) + " is " + kind_name(v) + ", not an int");
  }
  std::string as_str(uint32_t v, const char* what) const {
    const pickle::Value& x = V(v);
    if (x.kind != Kind::Str) fail(std::string(what) + " is " + kind_name(v) + ", not a str");
    return S(v);
  }
  bool as_bool(uint32_t v, const char* what) const {
    const pickle::Value& x = V(v);
    if (x.kind == Kind::Bool) return x.b;
    if (x.kind == Kind::Int) return x.i != 0;
    if (x.kind == Kind::None) return false;
    fail(std::string(what) + " is " + kind_name(v) + ", not a bool");
  }
  double as_float(uint32_t v, const char* what) const {
    const pickle::Value& x = V(v);
    if (x.kind == Kind::Float) return x.f;
    if (x.kind == Kind::Int) return (double)x.i;
    fail(std::string(what) + " is " + kind_name(v) + ", not a float");
  }
  const std::vector<uint32_t>& seq(uint32_t v, const char* what) const {
    const pickle::Value& x = V(v);
    if (x.kind != Kind::Tuple && x.kind != Kind::List)
      fail(std::string(what) + " is " + kind_name(v) + ", not a sequence");
    return I(v);
  }
  int64_t enum_value(uint32_t v, const char* cls, int max) const {
    need_obj(v, cls, cls);
    uint32_t a = P->arg(v, 0);
    int64_t x = as_int(a, cls);
    if (x < 1 || x > max) fail(std::string(cls) + "(" + std::to_string(x) + ") is not one of its members");
    return x;
  }
  const DT& dtype_of(uint32_t v) const {
    std::string c(P->class_of(v));
    if (c != "tinygrad.dtype.DType") fail("a dtype is " + kind_name(v) + ", not a tinygrad.dtype.DType");
    const std::string& name = as_str(P->arg(v, 2), "DType.name");
    for (const DT& d : kDTypes)
      if (name == d.name) return d;
    fail("the dtype '" + name + "' is not one of the engine's");
  }
  int op_of(uint32_t v) const { return (int)enum_value(v, "tinygrad.uop.Ops", trace_num_ops()); }

  // ***** args in lib/uop/serialize.h's encoding (as tests/parity/uop_codec.py writes the reference's) *****
  size_t budget_ = 0;
  // enc and repr walk a pickled value the same way: each part counts against one budget, each level against the depth
  void walk_guard(int depth, const char* what) {
    if (depth > kMaxNesting) fail(std::string(what) + " nested deeper than " + std::to_string(kMaxNesting) + " levels");
    if (++budget_ > 1000000) fail(std::string(what) + " with more than a million parts");
  }
  std::string enc(uint32_t v, int depth) {
    walk_guard(depth, "an arg");
    const pickle::Value& x = V(v);
    switch (x.kind) {
      case Kind::None:
        return "N";
      case Kind::Bool:
        return x.b ? "T" : "F";
      case Kind::Int:
        return "i" + std::to_string(x.i);
      case Kind::BigInt:
        return "i" + S(v);
      case Kind::Float:
        return "f" + hex_double(x.f);
      case Kind::Str:
        return "s" + std::to_string(P->str(v).size()) + ":" + S(v);
      case Kind::Bytes: {
        std::string r = bytes_repr(S(v));
        return "R" + std::to_string(r.size()) + ":" + r;
      }
      case Kind::Tuple:
      case Kind::List: {
        std::string r = "(";
        const std::vector<uint32_t>& items = I(v);
        for (size_t i = 0; i < items.size(); i++) {
          if (i) r += ",";
          r += enc(items[i], depth + 1);
          if (r.size() > kMaxArgBytes) fail("an arg longer than 64 MB");
        }
        return r + ")";
      }
      case Kind::Object:
        return enc_object(v, depth);
      default: {
        std::string r = repr(v, depth);
        return "R" + std::to_string(r.size()) + ":" + r;
      }
    }
  }
  std::string enc_fields(uint32_t obj, std::initializer_list<const char*> names, int depth) {
    std::string r;
    for (const char* n : names) r += (r.empty() ? "" : ",") + enc(field(obj, n), depth + 1);
    return r;
  }
  std::string opts(uint32_t v, int depth) {  // a tuple of Opt as ((op name, axis, arg), ...), None as None
    if (V(v).kind == Kind::None) return "N";
    std::string r = "(";
    const auto& items = seq(v, "KernelInfo opts");
    for (size_t i = 0; i < items.size(); i++) {
      uint32_t o = need_obj(items[i], "tinygrad.codegen.opt.Opt", "an opt");
      std::string name = kOptOps[enum_value(field(o, "op"), "tinygrad.codegen.opt.OptOps", 10)];
      r += (i ? "," : "") + std::string("(s") + std::to_string(name.size()) + ":" + name + "," +
           enc(field(o, "axis"), depth + 2) + "," + enc(field(o, "arg"), depth + 2) + ")";
    }
    return r + ")";
  }
  std::string enc_object(uint32_t v, int depth) {
    std::string c(P->class_of(v));
    if (c == "tinygrad.uop.Ops") return std::string("o") + trace_op_name(op_of(v)) + " ";
    if (c == "tinygrad.uop.ops.AxisType") return std::string("a") + kAxisTypes[enum_value(v, c.c_str(), 12)] + " ";
    if (c == "tinygrad.dtype.AddrSpace") return std::string("A") + kAddrSpaces[enum_value(v, c.c_str(), 4)] + " ";
    if (c == "tinygrad.dtype.DType") return std::string("d") + dtype_of(v).attr + " ";
    if (c == "tinygrad.dtype.ConstFloat") return "f" + hex_double(as_float(P->arg(v, 0), "ConstFloat"));
    if (c == "tinygrad.dtype.InvalidType") return "I";
    if (c == "tinygrad.uop.ops.ParamArg")
      return "P(" +
             enc_fields(
                 v, {"slot", "dtype", "vmin_vmax", "multiple_of", "name", "addrspace", "axis", "device", "volatile"},
                 depth) +
             ")";
    if (c == "tinygrad.uop.ops.KernelInfo") {
      uint32_t est = field(v, "estimates");
      std::string e = V(est).kind == Kind::None
                          ? "N"
                          : "(" +
                                enc_fields(need_obj(est, "tinygrad.renderer.Estimates", "KernelInfo.estimates"),
                                           {"ops", "lds", "mem"}, depth + 1) +
                                ")";
      return "K(" + enc_fields(v, {"name", "axis_types", "dont_use_locals"}, depth) + "," +
             opts(field(v, "applied_opts"), depth + 1) + "," + opts(field(v, "opts_to_apply"), depth + 1) + "," + e +
             "," + enc(field(v, "beam"), depth + 1) + ")";
    }
    if (c == "tinygrad.uop.ops.CallInfo") {  // CallInfo(grad_fxn=None, name, precompile, precompile_backward, aux)
      if (P->num_args(v) < 4) fail("a CallInfo with " + std::to_string(P->num_args(v)) + " arguments");
      return "C(" + enc(P->arg(v, 1), depth + 1) + "," + enc(P->arg(v, 2), depth + 1) + "," +
             enc(P->arg(v, 3), depth + 1) + ")";
    }
    if (c == "tinygrad.schedule.indexing.BufferizeOpts")
      return "B(" + enc_fields(v, {"device", "addrspace", "removable"}, depth) + ")";
    // any other record: its python repr, marked as the port's writer marks the reprs of its structured args
    std::string r = repr(v, depth);
    return "R" + std::to_string(r.size()) + ":" + r;
  }

  // a UOp held in an arg (HCQInfo's kernels): a hash of its structure (op, dtype, arg, sources), walked without
  // recursion over its sources and memoized per pickle value, so equal UOps read alike and different ones do not
  std::unordered_map<uint32_t, uint64_t> uop_hash_;
  uint64_t uop_hash(uint32_t root, int depth) {
    std::vector<std::pair<uint32_t, bool>> st{{root, false}};
    while (!st.empty()) {
      auto [v, ready] = st.back();
      st.pop_back();
      if (uop_hash_.count(v)) continue;
      if (!is_obj(v, "tinygrad.uop.ops.UOp")) fail("a UOp's source is " + kind_name(v));
      const auto& srcs = seq(P->arg(v, 2), "a UOp's sources");
      if (!ready) {
        if (st.size() > 10000000) fail("a UOp graph too big to read");
        st.push_back({v, true});
        for (uint32_t s : srcs)
          if (!uop_hash_.count(s)) st.push_back({s, false});
        continue;
      }
      std::string key = std::to_string(op_of(P->arg(v, 0))) + "|" + dtype_of(P->arg(v, 1)).attr + "|" +
                        repr(P->arg(v, 3), depth + 1) + "|" + repr(P->arg(v, 4), depth + 1);
      uint64_t h = std::hash<std::string>()(key);
      for (uint32_t s : srcs) h = (h ^ uop_hash_.at(s)) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
      uop_hash_[v] = h;
    }
    return uop_hash_.at(root);
  }

  // ***** python repr of a value (ProgramInfo and other records the port stores by repr) *****
  static std::string bytes_repr(const std::string& b) {
    bool sq = b.find('\'') != std::string::npos && b.find('"') == std::string::npos;
    char q = sq ? '"' : '\'';
    std::string r = "b";
    r += q;
    for (unsigned char c : b) {
      if (c == (unsigned char)q || c == '\\')
        r += '\\', r += (char)c;
      else if (c == '\t')
        r += "\\t";
      else if (c == '\n')
        r += "\\n";
      else if (c == '\r')
        r += "\\r";
      else if (c < 32 || c >= 127) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        r += buf;
      } else
        r += (char)c;
    }
    return r + q;
  }
  std::string repr(uint32_t v, int depth) {
    walk_guard(depth, "a value");
    const pickle::Value& x = V(v);
    switch (x.kind) {
      case Kind::None:
        return "None";
      case Kind::Bool:
        return x.b ? "True" : "False";
      case Kind::Int:
        return std::to_string(x.i);
      case Kind::BigInt:
        return S(v);
      case Kind::Float:
        return py_float_repr(x.f);
      case Kind::Str:
        return py_str_repr(S(v));
      case Kind::Bytes:
        return bytes_repr(S(v));
      case Kind::Tuple:
      case Kind::List:
      case Kind::Set:
      case Kind::FrozenSet: {
        bool tup = x.kind == Kind::Tuple;
        std::string r = tup ? "(" : x.kind == Kind::List ? "[" : "{";
        const std::vector<uint32_t>& items = I(v);
        for (size_t i = 0; i < items.size(); i++) r += (i ? ", " : "") + repr(items[i], depth + 1);
        if (tup && items.size() == 1) r += ",";
        return r + (tup ? ")" : x.kind == Kind::List ? "]" : "}");
      }
      case Kind::Dict: {
        std::string r = "{";
        const std::vector<uint32_t>& items = I(v);
        for (size_t i = 0; i + 1 < items.size(); i += 2)
          r += (i ? ", " : "") + repr(items[i], depth + 1) + ": " + repr(items[i + 1], depth + 1);
        return r + "}";
      }
      case Kind::Global:
        return "<class '" + S(v) + "'>";
      case Kind::Object:
        break;
    }
    std::string c(P->class_of(v));
    if (c == "tinygrad.uop.Ops") return std::string("Ops.") + trace_op_name(op_of(v));
    if (c == "tinygrad.uop.ops.AxisType") return std::string("AxisType.") + kAxisTypes[enum_value(v, c.c_str(), 12)];
    if (c == "tinygrad.dtype.AddrSpace") return std::string("AddrSpace.") + kAddrSpaces[enum_value(v, c.c_str(), 4)];
    if (c == "tinygrad.dtype.DType") return std::string("dtypes.") + dtype_of(v).attr;
    if (c == "tinygrad.dtype.ConstFloat") return py_float_repr(as_float(P->arg(v, 0), "ConstFloat"));
    if (c == "tinygrad.dtype.InvalidType") return "Invalid";
    if (c == "tinygrad.helpers.Target") {  // Target.__repr__
      auto s = [&](const char* f) { return as_str(field(v, f), "Target"); };
      auto trim = [](std::string t) {
        while (!t.empty() && t.back() == ':') t.pop_back();
        return t;
      };
      std::string fst = trim(s("interface") + ":" + s("indices")),
                  snd = trim(s("device") + ":" + s("renderer") + ":" + s("arch"));
      return (fst.empty() ? "" : fst + "+") + snd;
    }
    if (c == "tinygrad.uop.ops.UOp") {  // a UOp in an arg (a ProgramInfo's Variables): its name, as the port's expr()
      uint32_t a = P->arg(v, 3);
      if (is_obj(a, "tinygrad.uop.ops.ParamArg") && V(P->field(a, "name")).kind == Kind::Str)
        return S(P->field(a, "name"));
      char h[20];
      std::snprintf(h, sizeof h, "%016llx", (unsigned long long)uop_hash(v, depth));
      return "UOp(Ops." + std::string(trace_op_name(op_of(P->arg(v, 0)))) + ", #" + h + ")";
    }
    if (c == "tinygrad.uop.ops.ProgramInfo") {  // the port's ProgramInfo::repr
      std::string vars;
      const auto& vs = seq(field(v, "vars"), "ProgramInfo.vars");
      for (size_t i = 0; i < vs.size(); i++) vars += (i ? ", " : "") + repr(vs[i], depth + 1);
      if (vs.size() == 1) vars += ",";
      return "ProgramInfo(name=" + repr(field(v, "name"), depth + 1) +
             ", global_size=" + repr(field(v, "global_size"), depth + 1) +
             ", local_size=" + repr(field(v, "local_size"), depth + 1) + ", vars=(" + vars + ")" +
             ", globals=" + repr(field(v, "globals"), depth + 1) + ", outs=" + repr(field(v, "outs"), depth + 1) +
             ", ins=" + repr(field(v, "ins"), depth + 1) + ", target=" + repr(field(v, "target"), depth + 1) + ")";
    }
    // a dataclass: Name(field=value, ...) from its state, else Name(args...)
    std::string name = c.substr(c.rfind('.') + 1), r = name + "(";
    const pickle::Value& o = V(v);
    if (o.state() != kNoValue && V(o.state()).kind == Kind::Dict) {
      const auto& kv = I(o.state());
      for (size_t i = 0; i + 1 < kv.size(); i += 2)
        r += (i ? ", " : "") + (V(kv[i]).kind == Kind::Str ? S(kv[i]) : repr(kv[i], depth + 1)) + "=" +
             repr(kv[i + 1], depth + 1);
    } else {
      for (size_t i = 0; i < P->num_args(v); i++) r += (i ? ", " : "") + repr(P->arg(v, i), depth + 1);
    }
    return r + ")";
  }

  // ***** the trace file *****
  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string m = err ? err : "?";
      sqlite3_free(err);
      throw ImportError("trace '" + opt_.out_path + "': " + m);
    }
  }
  struct Stmt {
    sqlite3_stmt* s = nullptr;
    Importer* im;
    Stmt(Importer* i, const char* sql) : im(i) {
      if (sqlite3_prepare_v2(i->db_, sql, -1, &s, nullptr) != SQLITE_OK)
        throw ImportError("trace '" + i->opt_.out_path + "': " + sqlite3_errmsg(i->db_));
    }
    ~Stmt() { sqlite3_finalize(s); }
    Stmt& i64(int k, int64_t v) {
      sqlite3_bind_int64(s, k, v);
      return *this;
    }
    Stmt& text(int k, const std::string& v) {
      sqlite3_bind_text(s, k, v.data(), (int)v.size(), SQLITE_TRANSIENT);
      return *this;
    }
    Stmt& blob(int k, const std::string& v) {
      sqlite3_bind_blob(s, k, v.data(), (int)v.size(), SQLITE_TRANSIENT);
      return *this;
    }
    Stmt& null(int k) {
      sqlite3_bind_null(s, k);
      return *this;
    }
    void run() {
      if (sqlite3_step(s) != SQLITE_DONE)
        throw ImportError("trace '" + im->opt_.out_path + "': write: " + sqlite3_errmsg(im->db_));
      sqlite3_reset(s);
      sqlite3_clear_bindings(s);
    }
  };
  std::unordered_map<std::string, int64_t> strings_;
  std::vector<const std::string*> string_of_;  // id - 1 -> the string
  std::unique_ptr<Stmt> st_str_;
  int64_t intern(const std::string& s) {
    auto it = strings_.find(s);
    if (it != strings_.end()) return it->second;
    int64_t id = (int64_t)strings_.size() + 1;
    auto [at, _] = strings_.emplace(s, id);
    string_of_.push_back(&at->first);
    st_str_->i64(1, id).text(2, s).run();
    return id;
  }
  const std::string& str(int64_t id) const { return *string_of_.at((size_t)id - 1); }
  int64_t cursor_ = 0;  // steps laid out one after another when there are no times
  void progress(const char* what, uint64_t done, uint64_t total) {
    if (opt_.progress) opt_.progress(what, done, total);
  }

  // uops: content -> id (equal content merged, as the port's writer writes a UOp once)
  struct Content {
    int op, dtype;
    int64_t arg, tag;
    std::vector<int64_t> src;
    bool operator==(const Content& o) const {
      return op == o.op && dtype == o.dtype && arg == o.arg && tag == o.tag && src == o.src;
    }
  };
  static size_t content_hash(const Content& c) {
    uint64_t h =
        (uint64_t)c.op * 0x9e3779b97f4a7c15ull ^ (uint64_t)c.dtype << 20 ^ (uint64_t)c.arg * 31 ^ (uint64_t)c.tag;
    for (int64_t s : c.src) h = (h ^ (uint64_t)s) * 0x100000001b3ull;
    return h;
  }
  std::vector<Content> nodes_;  // id - 1 -> content
  // the ids by content (hashing and comparing nodes_[id - 1]; id 0 stands for the content being looked up)
  const Content* probe_ = nullptr;
  const Content& content_of(int64_t id) const { return id ? nodes_[(size_t)id - 1] : *probe_; }
  struct IdHash {
    const Importer* im;
    size_t operator()(int64_t id) const { return content_hash(im->content_of(id)); }
  };
  struct IdEq {
    const Importer* im;
    bool operator()(int64_t a, int64_t b) const { return im->content_of(a) == im->content_of(b); }
  };
  std::unordered_set<int64_t, IdHash, IdEq> content_{64, IdHash{this}, IdEq{this}};
  std::unordered_map<int64_t, int64_t> by_num_;  // trace_num -> uop id
  std::unordered_map<int64_t, uint32_t> argv_;   // PROGRAM and SINK nodes: their arg's pickle value
  static constexpr int kProgram = 8, kLinear = 9, kSource = 10, kSink = 12, kConst = 60, kRewriteError = 4;
  // a str arg's text ("s<len>:<text>"), else its display
  std::string arg_text_of(int64_t id) const {
    const std::string& e = str(nodes_.at((size_t)id - 1).arg);
    size_t colon = e.find(':');
    if (!e.empty() && e[0] == 's' && colon != std::string::npos) return e.substr(colon + 1);
    try {
      return arg_display(e);
    } catch (const ArgFormatError&) {
      return e;
    }
  }
  int64_t next_uop_ = 1;
  std::unique_ptr<Stmt> st_uop_;
  int64_t add_uop(const Content& c) {
    probe_ = &c;
    if (auto it = content_.find(0); it != content_.end()) return *it;
    int64_t id = next_uop_++;
    std::string src;
    for (int64_t s : c.src) {
      int64_t d = id - s;
      uint64_t z = (uint64_t)((d << 1) ^ (d >> 63));
      while (z >= 0x80) src.push_back((char)(z | 0x80)), z >>= 7;
      src.push_back((char)z);
    }
    st_uop_->i64(1, id).i64(2, c.op).i64(3, c.dtype).i64(4, c.arg);
    if (c.tag)
      st_uop_->i64(5, c.tag);
    else
      st_uop_->null(5);
    if (src.empty())
      st_uop_->null(6);
    else
      st_uop_->blob(6, src);
    st_uop_->run();
    nodes_.push_back(c);
    content_.insert(id);
    sum_.uops++;
    return id;
  }
  int64_t uop(int64_t num, const char* what) {
    auto it = by_num_.find(num);
    if (it == by_num_.end())
      fail(std::string(what) + " refers to UOp " + std::to_string(num) + ", which uop_fields does not hold");
    return it->second;
  }

  // rules: one per UPat location (file, line)
  std::map<std::pair<std::string, int64_t>, int64_t> rules_;
  std::unique_ptr<Stmt> st_rule_;
  std::string source_root_;
  std::string rel(const std::string& path) {
    auto [root, r] = split_root(path);
    if (!root.empty() && source_root_.empty()) source_root_ = root;
    return root == source_root_ ? r : path;
  }
  int64_t rule(uint32_t loc) {
    const auto& l = seq(loc, "a match's UPat location");
    if (l.size() != 2) fail("a match's UPat location is not (file, line)");
    std::string f = rel(as_str(l[0], "the UPat's file"));
    int64_t line = as_int(l[1], "the UPat's line");
    auto key = std::make_pair(f, line);
    if (auto it = rules_.find(key); it != rules_.end()) return it->second;
    int64_t id = (int64_t)rules_.size() + 1;
    st_rule_->i64(1, id).i64(2, intern("")).i64(3, intern(f)).i64(4, line).i64(5, intern("")).run();
    rules_.emplace(key, id);
    sum_.rules++;
    return id;
  }

  void open_out();
  void write_meta(const std::string& producer);
  void read_uops(uint32_t fields);
  struct StepTimes {
    int64_t st = 0, en = 0;
    bool known = false;
  };
  struct CtxInfo {
    int64_t id;
    std::string name;
    std::vector<int64_t> steps;  // step ids
    std::vector<std::string> step_names;
    int64_t st = 0, en = 0;
  };
  std::vector<CtxInfo> ctxs_;
  void read_rewrites(uint32_t trace);
  void read_profile(const std::string& path);
  // read_profile's steps, over what they share (defined with them)
  struct ProfileState;
  int64_t profile_time(uint32_t v, const char* what);  // a Decimal of microseconds (or an int) in ns
  std::string profile_name(uint32_t v);                // a TracingKey's display name, a str, or a repr
  void scan_devices(ProfileState& ps);
  void read_buffers(ProfileState& ps);
  void write_kernel(ProfileState& ps, const std::string& device, const std::string& name, int64_t st, int64_t en,
                    uint32_t key, const std::string& bufs, const std::string& var_vals);
  void exec_bufs(ProfileState& ps, uint32_t arg, std::string& bufs, std::string& var_vals);
  void range_event(ProfileState& ps, uint32_t e);
  void point_event(ProfileState& ps, uint32_t e);
  void device_event(ProfileState& ps, uint32_t e);
  void graph_event(ProfileState& ps, uint32_t e);
  void replay_outputs();
  void write_programs();
  // profile state
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> tiny_;  // TINY spans: (name, (st, en))
  std::unordered_map<std::string, int64_t> program_by_key_;                // PROGRAM key bytes -> programs.id
  std::vector<std::vector<std::string>> ctx_keys_;                         // per context: its bytes keys
  std::unordered_map<std::string, int64_t> program_by_name_;
  void set_times();
};

void Importer::open_out() {
  const std::string& out = opt_.out_path;
  struct stat st;
  if (::stat(out.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) throw ImportError("'" + out + "' exists and is not a regular file");
    if (st.st_size > 0) {
      std::ifstream f(out, std::ios::binary);
      unsigned char h[72] = {};
      f.read((char*)h, sizeof h);
      uint32_t app = (uint32_t)h[68] << 24 | (uint32_t)h[69] << 16 | (uint32_t)h[70] << 8 | (uint32_t)h[71];
      if (std::memcmp(h, "SQLite format 3", 16) != 0 || app != (uint32_t)TRACE_APPLICATION_ID)
        throw ImportError("'" + out + "' exists and is not a trace: not overwriting it");
    }
  }
  tmp_path_ = out + ".import-" + std::to_string(getpid());
  std::remove(tmp_path_.c_str());
  if (sqlite3_open_v2(tmp_path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
    throw ImportError("cannot create '" + tmp_path_ + "': " + (db_ ? sqlite3_errmsg(db_) : "out of memory"));
  exec("PRAGMA journal_mode=OFF");
  exec("PRAGMA synchronous=OFF");
  exec("PRAGMA application_id=" + std::to_string(TRACE_APPLICATION_ID));
  exec("PRAGMA user_version=" + std::to_string(TRACE_SCHEMA_VERSION));
  exec(TRACE_SCHEMA_SQL);
  exec("BEGIN");
  st_str_ = std::make_unique<Stmt>(this, "INSERT INTO strings(id, value) VALUES(?, ?)");
  st_uop_ = std::make_unique<Stmt>(this, "INSERT INTO uops(id, op, dtype, arg, tag, src) VALUES(?,?,?,?,?,?)");
  st_rule_ = std::make_unique<Stmt>(this, "INSERT INTO rules(id, matcher, file, line, source) VALUES(?,?,?,?,?)");
  Stmt o(this, "INSERT INTO ops(id, name) VALUES(?, ?)");
  for (int i = 1; i <= trace_num_ops(); i++) o.i64(1, i).text(2, trace_op_name(i)).run();
  Stmt d(this, "INSERT INTO dtypes(id, name) VALUES(?, ?)");
  for (const DT& x : kDTypes) d.i64(1, x.id).text(2, x.attr).run();
}

void Importer::write_meta(const std::string& producer) {
  Stmt s(this, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)");
  auto meta = [&](const std::string& k, const std::string& v) { s.text(1, k).text(2, v).run(); };
  meta("schema_version", std::to_string(TRACE_SCHEMA_VERSION));
  meta("producer", producer);
  meta("imported_from", opt_.rewrites_path + (opt_.profile_path.empty() ? "" : " " + opt_.profile_path));
  meta("command", "tinyviz-cli import-tinygrad " + opt_.rewrites_path +
                      (opt_.profile_path.empty() ? "" : " " + opt_.profile_path) + " " + opt_.out_path);
  meta("created_unix", std::to_string((long long)time(nullptr)));
  meta("clock", opt_.profile_path.empty() ? "none: the reference's rewrite trace holds no times; steps are laid out "
                                            "one after another by their match durations"
                                          : "perf_counter ns of the reference's process (its profile)");
  meta("source_root", source_root_);
  meta("status", "complete");
}

void Importer::read_uops(uint32_t fields) {
  where_ = "RewriteTrace.uop_fields";
  const pickle::Value& d = V(fields);
  if (d.kind != Kind::Dict) fail("is " + kind_name(fields) + ", not a dict");
  std::vector<std::pair<int64_t, uint32_t>> recs;
  const std::vector<uint32_t>& kv = I(fields);
  for (size_t i = 0; i + 1 < kv.size(); i += 2) recs.push_back({as_int(kv[i], "a trace_num"), kv[i + 1]});
  std::sort(recs.begin(), recs.end());  // a UOp's sources are numbered before it
  sum_.uop_records = recs.size();
  for (size_t k = 0; k < recs.size(); k++) {
    auto [num, rec] = recs[k];
    where_ = "RewriteTrace.uop_fields[" + std::to_string(num) + "]";
    if (k && recs[k - 1].first == num) fail("appears twice");
    const auto& f = seq(rec, "the record");
    if (f.size() < 5) fail("a record of " + std::to_string(f.size()) + " fields, not (op, dtype, src, arg, tag)");
    Content c;
    c.op = op_of(f[0]);
    c.dtype = dtype_of(f[1]).id;
    for (uint32_t s : seq(f[2], "src")) {
      int64_t n = as_int(s, "a src");
      if (n >= num) fail("src " + std::to_string(n) + " is not numbered before it (a cycle?)");
      c.src.push_back(uop(n, "src"));
    }
    budget_ = 0;
    c.arg = intern(enc(f[3], 0));
    budget_ = 0;
    c.tag = V(f[4]).kind == Kind::None ? 0 : intern(enc(f[4], 0));
    int64_t id = add_uop(c);
    by_num_[num] = id;
    if (c.op == kProgram || c.op == kSink) argv_[id] = f[3];
    if (k % 20000 == 0) progress("uops", k, recs.size());
  }
  where_.clear();
}

void Importer::read_rewrites(uint32_t trace) {
  need_obj(trace, "tinygrad.uop.ops.RewriteTrace", "the pickle");
  uint32_t keys = field(trace, "keys"), rewrites = field(trace, "rewrites");
  read_uops(field(trace, "uop_fields"));
  const auto& ks = seq(keys, "RewriteTrace.keys");
  const auto& rs = seq(rewrites, "RewriteTrace.rewrites");
  if (ks.size() != rs.size())
    fail("RewriteTrace has " + std::to_string(ks.size()) + " keys and " + std::to_string(rs.size()) +
         " lists of rewrites");
  Stmt ctx(this, "INSERT INTO contexts(id, name, thread, t_start, t_end) VALUES(?,?,?,?,?)");
  Stmt step(this,
            "INSERT INTO steps(id, context, parent, depth, name, file, line, flags, input_root, t_start, t_end, "
            "n_matches, error, stats) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  Stmt match(this, "INSERT INTO matches(step, ordinal, before, after, rule, dur) VALUES(?,?,?,?,?,?)");
  Stmt err(this, "INSERT INTO rule_errors(step, ordinal, before, error_uop, rule, message) VALUES(?,?,?,?,?,?)");
  Stmt cstat(this,
             "INSERT INTO context_rule_stats(context, rule, candidates, early_rejects, attempts, matches, excl_ns, "
             "incl_ns) VALUES(?,?,?,?,?,?,?,?)");
  int64_t step_id = 0;
  uint64_t total_steps = 0;
  for (uint32_t r : rs) total_steps += seq(r, "a context's rewrites").size();
  for (size_t i = 0; i < ks.size(); i++) {
    where_ = "RewriteTrace.keys[" + std::to_string(i) + "]";
    uint32_t key = need_obj(ks[i], "tinygrad.helpers.TracingKey", "the key");
    CtxInfo ci;
    ci.id = (int64_t)i + 1;
    ci.name = as_str(field(key, "display_name"), "TracingKey.display_name");
    std::vector<std::string> bkeys;
    if (uint32_t kk = P->field(key, "keys"); kk != kNoValue && (V(kk).kind == Kind::Tuple || V(kk).kind == Kind::List))
      for (uint32_t x : I(kk))
        if (V(x).kind == Kind::Bytes) bkeys.push_back(S(x));
    ctx_keys_.push_back(bkeys);
    std::map<int64_t, std::array<int64_t, 2>> stats;  // rule -> (matches, ns)
    std::vector<int64_t> parents;                     // the open step at each depth
    const auto& steps = seq(rs[i], "a context's rewrites");
    for (size_t j = 0; j < steps.size(); j++) {
      where_ = "RewriteTrace.rewrites[" + std::to_string(i) + "][" + std::to_string(j) + "]";
      uint32_t s = need_obj(steps[j], "tinygrad.uop.ops.TrackedGraphRewrite", "the rewrite");
      int64_t id = ++step_id;
      int64_t depth = as_int(field(s, "depth"), "depth");
      if (depth < 0 || depth > 4096) fail("depth " + std::to_string(depth));
      if ((size_t)depth > parents.size()) depth = (int64_t)parents.size();  // a depth the steps before never opened
      parents.resize((size_t)depth);
      int64_t parent = depth ? parents.back() : 0;
      parents.push_back(id);
      const auto& loc = seq(field(s, "loc"), "loc");
      if (loc.size() != 2) fail("loc is not (file, line)");
      std::string name = as_str(field(s, "name"), "name");
      int flags = (as_bool(field(s, "bottom_up"), "bottom_up") ? 1 : 0) | (as_bool(field(s, "walk"), "walk") ? 2 : 0) |
                  (as_bool(field(s, "enter_calls"), "enter_calls") ? 4 : 0);
      int64_t input = uop(as_int(field(s, "sink"), "sink"), "sink");
      const auto& ms = seq(field(s, "matches"), "matches");
      std::map<int64_t, std::array<int64_t, 2>> sstats;
      int64_t n_matches = 0, ns_total = 0;
      std::string error;
      for (size_t k = 0; k < ms.size(); k++) {
        const auto& m = seq(ms[k], "a match");
        if (m.size() < 4) fail("match " + std::to_string(k) + " is not (before, after, location, seconds)");
        int64_t before = uop(as_int(m[0], "before"), "a match's before");
        int64_t after = uop(as_int(m[1], "after"), "a match's after");
        int64_t rl = rule(m[2]);
        double secs = as_float(m[3], "a match's duration");
        int64_t dur = secs > 0 && secs < 1e9 ? (int64_t)(secs * 1e9 + 0.5) : 0;
        if (nodes_[(size_t)after - 1].op == kRewriteError) {  // REWRITE_ERROR: its arg is "ExcType\nmessage"
          std::string msg = arg_text_of(after);
          err.i64(1, id).i64(2, (int64_t)k).i64(3, before).i64(4, after).i64(5, rl).i64(6, intern(msg)).run();
          error = msg;
          sum_.rule_errors++;
          continue;
        }
        match.i64(1, id).i64(2, (int64_t)k).i64(3, before).i64(4, after).i64(5, rl).i64(6, dur).run();
        n_matches++, ns_total += dur;
        auto& a = sstats[rl];
        a[0]++, a[1] += dur;
        sum_.matches++;
      }
      // the reference records matches only: attempts are counted as the matches (no early rejects)
      nlohmann::json js = nlohmann::json::array();
      for (auto& [rl, a] : sstats) {
        js.push_back({rl, a[0], a[0], a[1]});
        auto& c = stats[rl];
        c[0] += a[0], c[1] += a[1];
      }
      int64_t t0 = cursor_;
      cursor_ += std::max<int64_t>(ns_total, 1000);
      step.i64(1, id).i64(2, ci.id).i64(3, parent).i64(4, depth).i64(5, intern(name));
      step.i64(6, intern(rel(as_str(loc[0], "loc's file")))).i64(7, as_int(loc[1], "loc's line")).i64(8, flags);
      step.i64(9, input).i64(10, t0).i64(11, cursor_).i64(12, n_matches);
      if (error.empty())
        step.null(13);
      else
        step.i64(13, intern(error));
      if (js.empty())
        step.null(14);
      else
        step.text(14, js.dump());
      step.run();
      ci.steps.push_back(id);
      ci.step_names.push_back(name);
      sum_.steps++;
      if (sum_.steps % 2000 == 0) progress("steps", sum_.steps, total_steps);
    }
    for (auto& [rl, a] : stats)
      cstat.i64(1, ci.id).i64(2, rl).i64(3, a[0]).i64(4, 0).i64(5, a[0]).i64(6, a[0]).i64(7, a[1]).i64(8, a[1]).run();
    ctx.i64(1, ci.id).i64(2, intern(ci.name)).i64(3, 0).i64(4, 0).i64(5, 0).run();
    ctxs_.push_back(std::move(ci));
    sum_.contexts++;
  }
  where_.clear();
}

// one program per codegen context: its last PROGRAM node that has its SOURCE (the reference's "View Program" and
// linearize/render steps hold it)
void Importer::write_programs() {
  Stmt prog(this,
            "INSERT INTO programs(id, name, device, context, source, uops, global_size, local_size, ops, mem, lds) "
            "VALUES(?,?,?,?,?,?,?,?,?,?,?)");
  std::vector<std::pair<int64_t, int64_t>> roots;  // (context, node)
  {
    sqlite3_stmt* q = nullptr;
    sqlite3_prepare_v2(db_,
                       "SELECT context, input_root FROM steps UNION ALL SELECT s.context, m.after FROM matches m JOIN "
                       "steps s ON s.id=m.step",
                       -1, &q, nullptr);
    while (sqlite3_step(q) == SQLITE_ROW) roots.push_back({sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1)});
    sqlite3_finalize(q);
  }
  std::map<int64_t, int64_t> last;  // context -> PROGRAM node
  for (auto [c, n] : roots) {
    const Content& x = nodes_[(size_t)n - 1];
    if (x.op != kProgram) continue;
    bool has_source = false;
    for (int64_t s : x.src) has_source |= nodes_[(size_t)s - 1].op == kSource;
    if (has_source) last[c] = n;
  }
  int64_t pid = 0;
  for (auto [ctx, n] : last) {
    where_ = "the PROGRAM of context " + std::to_string(ctx);
    budget_ = 0;
    const Content& x = nodes_[(size_t)n - 1];
    uint32_t pi = argv_.at(n);
    if (!is_obj(pi, "tinygrad.uop.ops.ProgramInfo")) continue;
    std::string source, uops, est[3] = {"", "", ""};
    int64_t ev[3] = {-1, -1, -1};
    for (int64_t s : x.src) {
      const Content& y = nodes_[(size_t)s - 1];
      if (y.op == kSource) source = arg_text_of(s);
      if (y.op == kSink && argv_.count(s) && is_obj(argv_[s], "tinygrad.uop.ops.KernelInfo")) {
        uint32_t e = P->field(argv_[s], "estimates");
        if (e != kNoValue && is_obj(e, "tinygrad.renderer.Estimates")) {
          const char* names[3] = {"ops", "mem", "lds"};
          for (int k = 0; k < 3; k++)
            if (uint32_t f = P->field(e, names[k]); f != kNoValue && V(f).kind == Kind::Int) ev[k] = V(f).i;
        }
      }
      if (y.op == kLinear) {  // the linearized program, as the port's format_uops lists it
        std::unordered_map<int64_t, size_t> index;
        for (size_t i = 0; i < y.src.size(); i++) index.emplace(y.src[i], i);
        char buf[32];
        for (size_t i = 0; i < y.src.size(); i++) {
          const Content& u = nodes_[(size_t)y.src[i] - 1];
          std::string srcs = "[";
          for (size_t k = 0; k < u.src.size(); k++) {
            auto it = index.find(u.src[k]);
            const Content& w = nodes_[(size_t)u.src[k] - 1];
            srcs += (k ? ", " : "") + (it == index.end() ? std::string("'--'")
                                       : w.op == kConst  ? "'" + arg_text_of(u.src[k]) + "'"
                                                         : std::to_string(it->second));
          }
          srcs += "]";
          std::string op = std::string("Ops.") + trace_op_name(u.op),
                      dt = std::string("dtypes.") + kDTypes[u.dtype].attr;
          std::snprintf(buf, sizeof buf, "%4zu ", i);
          std::string a;
          try {
            a = arg_display(str(u.arg));
          } catch (const ArgFormatError&) {
            a = "?";
          }
          uops += buf + op + std::string(op.size() < 20 ? 20 - op.size() : 0, ' ') + ": " + dt +
                  std::string(dt.size() < 40 ? 40 - dt.size() : 0, ' ') + " " + srcs +
                  std::string(srcs.size() < 32 ? 32 - srcs.size() : 0, ' ') + " " + a + "\n";
        }
      }
    }
    auto dims = [&](uint32_t v) -> std::string {
      if (V(v).kind == Kind::None) return "None";
      std::string r = "[";
      const auto& it = seq(v, "launch dims");
      for (size_t i = 0; i < it.size(); i++) r += (i ? ", " : "") + repr(it[i], 1);
      return r + "]";
    };
    std::string device;
    if (uint32_t t = P->field(pi, "target"); t != kNoValue && is_obj(t, "tinygrad.helpers.Target"))
      device = as_str(field(t, "device"), "Target.device");
    std::string name = strip_ansi(as_str(field(pi, "name"), "ProgramInfo.name"));
    ++pid;
    prog.i64(1, pid).i64(2, intern(name)).i64(3, intern(device)).i64(4, ctx).text(5, source).text(6, uops);
    prog.text(7, dims(field(pi, "global_size"))).text(8, dims(field(pi, "local_size")));
    prog.i64(9, ev[0]).i64(10, ev[1]).i64(11, ev[2]).run();
    for (const std::string& k : ctx_keys_[(size_t)ctx - 1]) program_by_key_[k] = pid;
    program_by_name_[name] = pid;
    sum_.programs++;
  }
  where_.clear();
}

// read_profile's shared state: the events, the devices' clock offsets, the buffers, the open statements
struct Importer::ProfileState {
  explicit ProfileState(Importer* im, const std::vector<uint32_t>& events)
      : evs(events),
        kev(im, "INSERT INTO kernel_events(program, name, device, t_start, t_end, bufs, var_vals) VALUES(?,?,?,?,?,?,?)"),
        mem(im, "INSERT INTO mem_events(kind, device, t, buffer, dtype, size, nbytes) VALUES(?,?,?,?,?,?,?)"),
        marker(im, "INSERT INTO markers(t, name, color) VALUES(?,?,?)"),
        range(im, "INSERT INTO ranges(device, name, t_start, t_end) VALUES(?,?,?,?)"),
        dev(im, "INSERT OR REPLACE INTO devices(device, tdiff, props) VALUES(?,?,?)") {}
  struct Buf {
    std::string dtype;
    int64_t size = 0, nbytes = 0;
  };
  const std::vector<uint32_t>& evs;
  std::unordered_map<std::string, int64_t> tdiff;  // device -> clock offset (ProfileDeviceEvent)
  std::set<std::string> timed;  // devices whose kernels have ranges (HCQ): their exec points only give the buffers
  std::unordered_map<int64_t, Buf> bufs;
  std::map<std::string, std::pair<std::string, std::string>> last_exec;  // device -> (bufs, var_vals) of its last exec
  Stmt kev, mem, marker, range, dev;
  int64_t offset(const std::string& device) const {
    auto it = tdiff.find(device);
    return it == tdiff.end() ? 0 : it->second;
  }
};

int64_t Importer::profile_time(uint32_t v, const char* what) {
  if (!is_obj(v, "decimal.Decimal")) {
    if (V(v).kind == Kind::Int) return V(v).i * 1000;
    fail(std::string(what) + " is " + kind_name(v) + ", not a Decimal");
  }
  int64_t ns;
  if (!decimal_us_to_ns(as_str(P->arg(v, 0), what), ns)) fail(std::string(what) + " is not a time in microseconds");
  return ns;
}

std::string Importer::profile_name(uint32_t v) {
  if (is_obj(v, "tinygrad.helpers.TracingKey")) return as_str(field(v, "display_name"), "TracingKey.display_name");
  if (V(v).kind == Kind::Str) return S(v);
  return repr(v, 0);
}

// the devices' clock offsets, and which devices time their kernels with ranges
void Importer::scan_devices(ProfileState& ps) {
  for (size_t i = 0; i < ps.evs.size(); i++) {
    uint32_t e = ps.evs[i];
    std::string c(P->class_of(e));
    where_ = "event " + std::to_string(i);
    if (c == "tinygrad.device.ProfileDeviceEvent")
      ps.tdiff[as_str(field(e, "device"), "device")] = profile_time(field(e, "tdiff"), "tdiff");
    if (c == "tinygrad.helpers.ProfileRangeEvent") {
      const std::string& d = as_str(field(e, "device"), "device");
      if (d != "TINY" && d != "USER" && d != "GC" && d.find(":COPY") == std::string::npos) ps.timed.insert(d);
    }
    if (c == "tinygrad.device.ProfileGraphEvent")
      for (uint32_t x : seq(field(e, "ents"), "ents")) ps.timed.insert(as_str(field(x, "device"), "device"));
  }
}

// the buffers first: the reference pickles its host events, then the devices', then the buffers' (not by time)
void Importer::read_buffers(ProfileState& ps) {
  for (size_t i = 0; i < ps.evs.size(); i++) {
    uint32_t e = ps.evs[i];
    where_ = "event " + std::to_string(i);
    if (P->class_of(e) != "tinygrad.helpers.ProfilePointEvent" || as_str(field(e, "name"), "name") != "alloc") continue;
    uint32_t arg = field(e, "arg"), sz = P->dict_get(arg, "sz");
    const DT& x = dtype_of(P->dict_get(arg, "dtype"));
    ProfileState::Buf b{x.name, sz == kNoValue ? 0 : as_int(sz, "sz"), 0};
    if (b.size < 0 || b.size > ((int64_t)1 << 50)) fail("a buffer of " + std::to_string(b.size) + " elements");
    b.nbytes = b.size * x.itemsize;
    ps.bufs[as_int(field(e, "key"), "key")] = b;
  }
}

// one kernel run, joined to its program by the PROGRAM key, else by name
void Importer::write_kernel(ProfileState& ps, const std::string& device, const std::string& name, int64_t st,
                            int64_t en, uint32_t key, const std::string& bufs, const std::string& var_vals) {
  int64_t p = 0;
  if (key != kNoValue && V(key).kind == Kind::Bytes)
    if (auto it = program_by_key_.find(S(key)); it != program_by_key_.end()) p = it->second;
  if (!p)
    if (auto it = program_by_name_.find(name); it != program_by_name_.end()) p = it->second;
  ps.kev.i64(1, p).i64(2, intern(name)).i64(3, intern(device)).i64(4, st).i64(5, std::max(st, en)).text(6, bufs);
  if (var_vals.empty())
    ps.kev.null(7);
  else
    ps.kev.text(7, var_vals);
  ps.kev.run();
  sum_.kernel_events++;
}

// an exec point's buffers as [[buffer, nbytes, mode], ...] and its var_vals as an object
void Importer::exec_bufs(ProfileState& ps, uint32_t arg, std::string& b, std::string& vv) {
  nlohmann::json j = nlohmann::json::array();
  std::set<int64_t> ins, outs;
  if (uint32_t x = P->dict_get(arg, "inputs"); x != kNoValue)
    for (uint32_t k : seq(x, "inputs")) ins.insert(as_int(k, "an input"));
  if (uint32_t x = P->dict_get(arg, "outputs"); x != kNoValue)
    for (uint32_t k : seq(x, "outputs")) outs.insert(as_int(k, "an output"));
  if (uint32_t x = P->dict_get(arg, "bufs"); x != kNoValue) {
    const auto& bs = seq(x, "bufs");
    for (size_t k = 0; k < bs.size(); k++) {
      int64_t id = as_int(bs[k], "a buffer");
      int mode = ins.count((int64_t)k) && outs.count((int64_t)k) ? 2 : outs.count((int64_t)k) ? 1 : 0;
      auto it = ps.bufs.find(id);
      j.push_back({id, it != ps.bufs.end() ? it->second.nbytes : 0, mode});
    }
  }
  b = j.dump();
  vv.clear();
  if (uint32_t x = P->dict_get(arg, "var_vals"); x != kNoValue && V(x).kind == Kind::Dict && !P->items(x).empty()) {
    nlohmann::json o = nlohmann::json::object();
    const auto& kv = I(x);
    for (size_t k = 0; k + 1 < kv.size(); k += 2)
      o[V(kv[k]).kind == Kind::Str ? S(kv[k]) : repr(kv[k], 1)] = V(kv[k + 1]).kind == Kind::Int ? V(kv[k + 1]).i : 0;
    vv = o.dump();
  }
}

// a span: TINY (a rewrite, timed later), USER/GC ranges, or a kernel run with the buffers of its device's last exec
void Importer::range_event(ProfileState& ps, uint32_t e) {
  std::string d = as_str(field(e, "device"), "device"), name = profile_name(field(e, "name"));
  int64_t diff = ps.offset(d), st = profile_time(field(e, "st"), "st") + diff;
  uint32_t env = field(e, "en");
  int64_t en = V(env).kind == Kind::None ? st : profile_time(env, "en") + diff;
  if (d == "TINY") {
    tiny_.push_back({name, {st, en}});
  } else if (d == "USER" || d == "GC") {
    ps.range.i64(1, intern(d)).i64(2, intern(name)).i64(3, st).i64(4, std::max(st, en)).run();
    sum_.ranges++;
  } else {
    auto& le = ps.last_exec[d];
    write_kernel(ps, d, strip_ansi(name), st, en, P->field(e, "profile_key"), le.first.empty() ? "[]" : le.first,
                 le.second);
    le = {};
  }
}

// a point: a marker, a buffer's alloc or free, or a kernel's exec (a run itself on untimed devices)
void Importer::point_event(ProfileState& ps, uint32_t e) {
  std::string d = as_str(field(e, "device"), "device"), kind = as_str(field(e, "name"), "name");
  int64_t t = profile_time(field(e, "ts"), "ts");
  uint32_t arg = field(e, "arg");
  if (kind == "marker") {
    uint32_t n = P->dict_get(arg, "name"), col = P->dict_get(arg, "color");
    ps.marker.i64(1, t)
        .i64(2, intern(n == kNoValue ? "" : profile_name(n)))
        .i64(3, intern(col == kNoValue ? "gray" : profile_name(col)))
        .run();
    sum_.markers++;
  } else if (kind == "alloc" || kind == "free") {
    int64_t key = as_int(field(e, "key"), "key");
    auto it = ps.bufs.find(key);
    ProfileState::Buf b = it != ps.bufs.end() ? it->second : ProfileState::Buf{};
    ps.mem.i64(1, kind == "alloc" ? 1 : 0)
        .i64(2, intern(d))
        .i64(3, t)
        .i64(4, key)
        .i64(5, intern(b.dtype))
        .i64(6, b.size)
        .i64(7, b.nbytes)
        .run();
    sum_.mem_events++;
  } else if (kind == "exec") {
    std::string b, vv;
    exec_bufs(ps, arg, b, vv);
    uint32_t n = P->dict_get(arg, "name");
    std::string name = strip_ansi(n == kNoValue ? "" : profile_name(n));
    if (ps.timed.count(d))
      ps.last_exec[d] = {b, vv};
    else
      write_kernel(ps, d, name, t, t, kNoValue, b, vv);  // an untimed run (DEV=CPU without HCQ2): a point in time
  }
}

void Importer::device_event(ProfileState& ps, uint32_t e) {
  std::string d = as_str(field(e, "device"), "device");
  uint32_t props = P->field(e, "props");
  std::string pj = props == kNoValue || V(props).kind == Kind::None ? "" : repr(props, 0);
  ps.dev.i64(1, intern(d)).i64(2, ps.offset(d)).text(3, pj).run();
  sum_.devices++;
}

// a graph's batched kernels, timed by its signals, and one range over them on "<DEV> Graph"
void Importer::graph_event(ProfileState& ps, uint32_t e) {
  const auto& ents = seq(field(e, "ents"), "ents");
  const auto& sigs = seq(field(e, "sigs"), "sigs");
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  std::string gdev;
  for (uint32_t x : ents) {
    std::string d = as_str(field(x, "device"), "device");
    int64_t a = as_int(field(x, "st_id"), "st_id"), b = as_int(field(x, "en_id"), "en_id");
    if (a < 0 || b < 0 || (size_t)a >= sigs.size() || (size_t)b >= sigs.size())
      fail("a graph entry's signal is out of range");
    int64_t diff = ps.offset(d);
    int64_t st = profile_time(sigs[(size_t)a], "a signal") + diff, en = profile_time(sigs[(size_t)b], "a signal") + diff;
    lo = std::min(lo, st), hi = std::max(hi, en);
    if (gdev.empty()) gdev = d.substr(0, d.find(':'));
    auto& le = ps.last_exec[d];
    write_kernel(ps, d, strip_ansi(profile_name(field(x, "name"))), st, en, P->field(x, "profile_key"),
                 le.first.empty() ? "[]" : le.first, le.second);
    le = {};
  }
  if (!ents.empty() && lo <= hi) {
    ps.range.i64(1, intern(gdev + " Graph"))
        .i64(2, intern("batched " + std::to_string(ents.size())))
        .i64(3, lo)
        .i64(4, hi)
        .run();
    sum_.ranges++;
  }
}

// the reference's profile pickle (a list of Profile*Event): kernel runs, ranges, markers, memory events, devices
void Importer::read_profile(const std::string& path) {
  std::string data = read_file(path);
  file_ = path;
  Pickle pk = pickle::load(data, path);
  P = &pk;
  uop_hash_.clear();  // keyed by the values of the rewrites' pickle
  work_ = 0, work_max_ = 32 * (uint64_t)data.size() + 10000000;
  ProfileState ps(this, seq(pk.root(), "the profile"));
  scan_devices(ps);
  read_buffers(ps);
  for (size_t i = 0; i < ps.evs.size(); i++) {
    uint32_t e = ps.evs[i];
    std::string c(P->class_of(e));
    where_ = "event " + std::to_string(i) + " (" + (c.empty() ? kind_name(e) : c) + ")";
    budget_ = 0;
    if (i % 5000 == 0) progress("profile events", i, ps.evs.size());
    if (c == "tinygrad.helpers.ProfileRangeEvent")
      range_event(ps, e);
    else if (c == "tinygrad.helpers.ProfilePointEvent")
      point_event(ps, e);
    else if (c == "tinygrad.device.ProfileDeviceEvent")
      device_event(ps, e);
    else if (c == "tinygrad.device.ProfileGraphEvent")
      graph_event(ps, e);
  }
  where_.clear();
  P = nullptr;
}

// contexts and steps get the times of the profile's TINY spans of the same name, in order; without them, steps lie
// one after another (cursor_)
void Importer::set_times() {
  Stmt ctx(this, "UPDATE contexts SET t_start=?, t_end=? WHERE id=?");
  Stmt step(this, "UPDATE steps SET t_start=?, t_end=? WHERE id=?");
  std::sort(tiny_.begin(), tiny_.end(), [](auto& a, auto& b) { return a.second.first < b.second.first; });
  std::unordered_map<std::string, std::vector<size_t>> by_name;
  for (size_t i = 0; i < tiny_.size(); i++) by_name[tiny_[i].first].push_back(i);
  std::unordered_map<std::string, size_t> next;
  auto take = [&](const std::string& name, int64_t after) -> const std::pair<int64_t, int64_t>* {
    auto it = by_name.find(name);
    if (it == by_name.end()) return nullptr;
    size_t& k = next[name];
    while (k < it->second.size() && tiny_[it->second[k]].second.first < after) k++;
    if (k >= it->second.size()) return nullptr;
    return &tiny_[it->second[k++]].second;
  };
  int64_t floor = 0;
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(db_, "SELECT t_start, t_end FROM steps WHERE id=?", -1, &q, nullptr);
  for (CtxInfo& c : ctxs_) {
    int64_t st = INT64_MAX, en = INT64_MIN;
    if (!tiny_.empty()) {
      const auto* cs = take(c.name, floor);
      int64_t prev = cs ? cs->first : floor;
      if (cs) st = cs->first, en = cs->second;
      for (size_t j = 0; j < c.steps.size(); j++) {
        const auto* ss = take(c.step_names[j], prev);
        int64_t a = ss ? ss->first : prev, b = ss ? ss->second : prev;
        step.i64(1, a).i64(2, b).i64(3, c.steps[j]).run();
        prev = a;
        st = std::min(st, a), en = std::max(en, b);
      }
      if (st != INT64_MAX) floor = st;
    } else {
      for (int64_t s : c.steps) {
        sqlite3_bind_int64(q, 1, s);
        if (sqlite3_step(q) == SQLITE_ROW)
          st = std::min<int64_t>(st, sqlite3_column_int64(q, 0)),
          en = std::max<int64_t>(en, sqlite3_column_int64(q, 1));
        sqlite3_reset(q);
      }
    }
    if (st == INT64_MAX) st = en = floor;
    ctx.i64(1, st).i64(2, en).i64(3, c.id).run();
  }
  sqlite3_finalize(q);
}

// every step's output root: its replayed last frame (the reference stores only the input); nodes the replay builds
// become uops of the trace, so `tinyviz-cli verify` finds every step reproducing its output
void Importer::replay_outputs() {
  exec("COMMIT");
  struct Out {
    int64_t step, root;
    std::vector<std::pair<int64_t, Content>> built;  // (replay id, content with replay ids)
  };
  std::vector<Out> outs;
  std::vector<std::tuple<int64_t, int64_t, std::string>> checkpoints;  // (step, frame, graph)
  {
    auto t = Trace::open(tmp_path_);
    size_t n = 0;
    for (const StepRow& s : t->steps()) {
      if (++n % 500 == 0) progress("replay", n, t->steps().size());
      if (!s.error.empty()) continue;  // a rule raised: the step did not finish
      StepReplay r(*t, s.id);
      size_t last = r.num_frames() - 1;
      int64_t root = r.root(last);
      if (!r.error().empty()) continue;
      Out o{s.id, root, {}};
      if (root < 0)
        for (int64_t id : r.nodes(last))
          if (id < 0) {
            const Node& x = t->node(id);
            o.built.push_back({id, Content{x.op, x.dtype, x.arg, x.tag, x.src}});
          }
      outs.push_back(std::move(o));
      // the replay checkpoints the port's writer stores for long top-down steps (schema.h), so a deep frame of an
      // imported step opens as fast
      if (!s.bottom_up && !s.walk && r.matches().size() >= StepReplay::kCheckpointMin) {
        StepReplay c(*t, s.id, StepReplay::Mode::scratch);
        for (size_t k = StepReplay::kCheckpointEvery; k < c.num_frames(); k += StepReplay::kCheckpointEvery) {
          std::string g = c.encode_frame(k);
          if (g.empty()) break;
          checkpoints.emplace_back(s.id, (int64_t)k, std::move(g));
        }
      }
    }
  }
  exec("BEGIN");
  Stmt up(this, "UPDATE steps SET output_root=? WHERE id=?");
  for (Out& o : outs) {
    std::unordered_map<int64_t, int64_t> ids;
    for (auto& [rid, c] : o.built) {
      for (int64_t& s : c.src)
        if (s < 0) s = ids.at(s);
      uint64_t before = sum_.uops;
      ids[rid] = add_uop(c);
      sum_.replay_uops += sum_.uops - before;
    }
    up.i64(1, o.root < 0 ? ids.at(o.root) : o.root).i64(2, o.step).run();
    sum_.replayed_steps++;
  }
  Stmt cp(this, "INSERT OR REPLACE INTO replay_checkpoints(step, frame, graph) VALUES(?, ?, ?)");
  for (auto& [step, frame, graph] : checkpoints) cp.i64(1, step).i64(2, frame).blob(3, graph).run();
}

ImportSummary Importer::run() {
  file_ = opt_.rewrites_path;
  open_out();
  try {
    {  // the rewrites' pickle and its values are let go before the profile and the replays
      std::string data = read_file(opt_.rewrites_path);
      Pickle pk = pickle::load(data, opt_.rewrites_path);
      P = &pk;
      work_ = 0, work_max_ = 32 * (uint64_t)data.size() + 10000000;
      read_rewrites(pk.root());
      write_programs();
      P = nullptr;
      argv_.clear();
      uop_hash_.clear();
    }
    if (!opt_.profile_path.empty()) read_profile(opt_.profile_path);
    file_ = opt_.rewrites_path;
    set_times();
    write_meta(kImportedProducer);
    sum_.producer = kImportedProducer;
    replay_outputs();
    exec(TRACE_INDEX_SQL);
    exec("COMMIT");
    st_str_.reset(), st_uop_.reset(), st_rule_.reset();
    sqlite3_close(db_);
    db_ = nullptr;
    if (std::rename(tmp_path_.c_str(), opt_.out_path.c_str()) != 0)
      throw ImportError("cannot write '" + opt_.out_path + "': " + std::strerror(errno));
    std::remove((opt_.out_path + "-wal").c_str());
    std::remove((opt_.out_path + "-shm").c_str());
  } catch (...) {
    st_str_.reset(), st_uop_.reset(), st_rule_.reset();
    if (db_) sqlite3_close(db_);
    db_ = nullptr;
    std::remove(tmp_path_.c_str());
    throw;
  }
  return sum_;
}

}  // namespace

ImportSummary import_tinygrad(const ImportOptions& opt) { return Importer(opt).run(); }

}  // namespace tg::viz
