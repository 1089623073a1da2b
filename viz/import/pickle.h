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

// 24 bytes: a 6 MB rewrites.pkl holds 1.3 million values. Strings and item lists live beside the values in the Pickle
// (Pickle::str, Pickle::items); the u fields are interpreted by kind
struct Value {
  union {
    int64_t i = 0;  // Int
    double f;       // Float
  };
  // Object: u0 the Global it is an instance of, u1 its constructor arguments (a Tuple, kNoValue if none), u2 its BUILD
  //   state (a Dict for a dataclass, a (None, slots) Tuple for slotted classes; kNoValue if none)
  // Tuple, List, Set, FrozenSet, Dict: u0 the index of its items (a Dict's are key0, value0, key1, value1, ...)
  // Str, Bytes, BigInt (its decimal text), Global ("module.name"): u0, u1 the offset and length of its bytes
  uint32_t u0 = kNoValue, u1 = kNoValue, u2 = kNoValue;
  Kind kind = Kind::None;
  bool b = false;  // Bool
  uint32_t cls() const { return u0; }
  uint32_t args() const { return u1; }
  uint32_t state() const { return u2; }
};

struct Limits {
  uint64_t max_values = 1ull << 26;  // on top of the input size bound: values in the arena
};

class Pickle {
 public:
  const Value& at(uint32_t v) const;  // throws PickleError for an index out of range
  // the bytes of a Str, Bytes, BigInt or Global ("" for other kinds)
  std::string_view str(uint32_t v) const;
  // the items of a Tuple, List, Set, FrozenSet or Dict (none for other kinds)
  const std::vector<uint32_t>& items(uint32_t v) const;
  uint32_t root() const { return root_; }
  size_t size() const { return values_.size(); }
  // Object helpers: the class name ("tinygrad.uop.ops.UOp"), "" for a non-object
  std::string_view class_of(uint32_t v) const;
  bool is(uint32_t v, Kind k) const { return at(v).kind == k; }
  // a field of an Object's state dict (dataclass __dict__ or a slots dict), kNoValue when missing
  uint32_t field(uint32_t obj, std::string_view name) const;
  // the value of a dict's key (a Str key), kNoValue when missing or when the dict has more than kMaxLookupKeys keys
  static constexpr size_t kMaxLookupKeys = 1024;
  uint32_t dict_get(uint32_t dict, std::string_view key) const;
  // an Object's constructor argument i (REDUCE / NEWOBJ args), kNoValue when missing
  uint32_t arg(uint32_t obj, size_t i) const;
  size_t num_args(uint32_t obj) const;

 private:
  friend class Machine;
  std::vector<Value> values_;
  std::string text_;                          // the strings' bytes
  std::vector<std::vector<uint32_t>> lists_;  // the containers' items
  uint32_t root_ = kNoValue;
};

// runs the pickle in data (what = the file's name, for the errors). Throws PickleError naming `what`, the byte offset
// and the problem (a refused global names its module.class).
Pickle load(std::string_view data, const std::string& what, const Limits& limits = {});

// the globals a tinygrad VIZ pickle may name; everything else is refused
bool allowed_global(std::string_view module, std::string_view name);

}  // namespace tg::viz::pickle
