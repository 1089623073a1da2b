// A restricted reader of Python pickles (protocols 2 to 5), for tinygrad's VIZ files (rewrites.pkl, profile.pkl).
// A pickle is a program for a stack machine whose GLOBAL opcodes name any Python callable and whose REDUCE calls it;
// this reader runs that machine over plain values only. Nothing is ever called: a global resolves only when its
// module.name is on an allow-list of the reference's record classes (tinygrad's UOp, Ops, DType, TracingKey,
// TrackedGraphRewrite, RewriteTrace, the profile events, decimal.Decimal, ...), and REDUCE, NEWOBJ and BUILD on such a
// class build an Object value (class, arguments, state) that the importer reads field by field. Any other global
// (os.system, builtins.eval, an unknown class) is refused with an error naming it and its byte offset.
// The input is untrusted: every read is bounds-checked, every length is checked against what is left before anything is
// allocated, memo indices live in a map, and the values form an arena addressed by index (no recursion builds or
// frees them), so truncated, garbage or hostile input gives a PickleError, never a crash, a hang or a huge allocation.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lib/error.h"

namespace tg::viz::pickle {

class PickleError : public tg::Error {
 public:
  using tg::Error::Error;
};

enum class Kind : uint8_t {
  None,
  Bool,
  Int,
  BigInt,
  Float,
  Str,
  Bytes,
  Tuple,
  List,
  Dict,
  Set,
  FrozenSet,
  Global,
  Object
};

constexpr uint32_t kNoValue = 0xffffffffu;

struct Value {
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;  // Int
  double f = 0;   // Float
  // Str and Bytes: the bytes (Str holds UTF-8); BigInt: its decimal text; Global: "module.name"
  std::string s;
  // Tuple, List, Set, FrozenSet: the items; Dict: key0, value0, key1, value1, ... in insertion order
  std::vector<uint32_t> items;
  // Object: the Global it is an instance of, its constructor arguments (a Tuple, kNoValue if none) and its BUILD
  // state (a Dict for a dataclass, a (None, slots) Tuple for slotted classes; kNoValue if none)
  uint32_t cls = kNoValue, args = kNoValue, state = kNoValue;
};

struct Limits {
  uint64_t max_values = 1ull << 26;  // on top of the input size bound: values in the arena
};

class Pickle {
 public:
  const Value& at(uint32_t v) const;  // throws PickleError for an index out of range
  uint32_t root() const { return root_; }
  size_t size() const { return values_.size(); }
  // Object helpers: the class name ("tinygrad.uop.ops.UOp"), "" for a non-object
  const std::string& class_of(uint32_t v) const;
  bool is(uint32_t v, Kind k) const { return at(v).kind == k; }
  // a field of an Object's state dict (dataclass __dict__ or a slots dict), kNoValue when missing
  uint32_t field(uint32_t obj, std::string_view name) const;
  // the value of a dict's key (a Str key), kNoValue when missing
  uint32_t dict_get(uint32_t dict, std::string_view key) const;
  // an Object's constructor argument i (REDUCE / NEWOBJ args), kNoValue when missing
  uint32_t arg(uint32_t obj, size_t i) const;
  size_t num_args(uint32_t obj) const;

 private:
  friend class Machine;
  std::vector<Value> values_;
  uint32_t root_ = kNoValue;
};

// runs the pickle in data (what = the file's name, for the errors). Throws PickleError naming `what`, the byte offset
// and the problem (a refused global names its module.class).
Pickle load(std::string_view data, const std::string& what, const Limits& limits = {});

// the globals a tinygrad VIZ pickle may name; everything else is refused
bool allowed_global(std::string_view module, std::string_view name);

}  // namespace tg::viz::pickle
