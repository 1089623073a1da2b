// Port of tinygrad/uop/__init__.py: the Ops enum (same members, order and values) and the GroupOp sets.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>

namespace tg {

// the order of these Ops controls the order of the toposort (tuplize) and must match the reference
enum class Ops : uint8_t {
  SPECIAL = 1,
  BUFFER = 2,
  NOOP = 3,
  REWRITE_ERROR = 4,
  PARAM = 5,
  FUNCTION = 6,
  CALL = 7,
  PROGRAM = 8,
  LINEAR = 9,
  SOURCE = 10,
  BINARY = 11,
  SINK = 12,
  AFTER = 13,
  GROUP = 14,
  STACK = 15,
  TUPLE = 16,
  GETTUPLE = 17,
  GETADDR = 18,
  INDEX = 19,
  SHRINK = 20,
  LOAD = 21,
  STORE = 22,
  WMMA = 23,
  CAST = 24,
  BITCAST = 25,
  EXP2 = 26,
  LOG2 = 27,
  SIN = 28,
  SQRT = 29,
  RECIPROCAL = 30,
  NEG = 31,
  TRUNC = 32,
  ADD = 33,
  MUL = 34,
  SHL = 35,
  SHR = 36,
  CDIV = 37,
  MAX = 38,
  CMOD = 39,
  CMPLT = 40,
  CMPNE = 41,
  CMPEQ = 42,
  XOR = 43,
  OR = 44,
  AND = 45,
  THREEFRY = 46,
  SUB = 47,
  FDIV = 48,
  POW = 49,
  FLOORDIV = 50,
  FLOORMOD = 51,
  WHERE = 52,
  MULACC = 53,
  BARRIER = 54,
  RANGE = 55,
  IF = 56,
  END = 57,
  ENDIF = 58,
  WAIT = 59,
  CONST = 60,
  CUSTOM = 61,
  CUSTOMI = 62,
  INS = 63,
  CONTIGUOUS = 64,
  CONTIGUOUS_BACKWARD = 65,
  DETACH = 66,
  STAGE = 67,
  COPY = 68,
  MSELECT = 69,
  MSTACK = 70,
  CUSTOM_FUNCTION = 71,
  RESHAPE = 72,
  PERMUTE = 73,
  EXPAND = 74,
  PAD = 75,
  FLIP = 76,
  UNSHARD = 77,
  REDUCE = 78,
  ALLREDUCE = 79,
  PYLITERAL = 80
};
constexpr int NUM_OPS = 80;
const char* op_name(Ops op);                // "ADD"
std::string op_repr(Ops op);                // "Ops.ADD"
Ops op_from_name(const std::string& name);  // throws tg::Error on an unknown name

// A set of Ops as a 128-bit mask: membership is one test, union/difference are cheap.
struct OpSet {
  uint64_t lo = 0, hi = 0;
  constexpr OpSet() = default;
  constexpr OpSet(Ops op) { add(op); }
  constexpr OpSet(std::initializer_list<Ops> ops) {
    for (Ops o : ops) add(o);
  }
  constexpr void add(Ops op) {
    int v = (int)op;
    if (v < 64) lo |= 1ull << v;
    else hi |= 1ull << (v - 64);
  }
  constexpr bool has(Ops op) const {
    int v = (int)op;
    return v < 64 ? (lo >> v) & 1 : (hi >> (v - 64)) & 1;
  }
  constexpr bool empty() const { return lo == 0 && hi == 0; }
  constexpr bool subset_of(const OpSet& o) const { return (lo & ~o.lo) == 0 && (hi & ~o.hi) == 0; }
  constexpr int size() const { return __builtin_popcountll(lo) + __builtin_popcountll(hi); }
  constexpr OpSet operator|(const OpSet& o) const { return OpSet(lo | o.lo, hi | o.hi); }
  constexpr OpSet operator-(const OpSet& o) const { return OpSet(lo & ~o.lo, hi & ~o.hi); }
  constexpr OpSet operator&(const OpSet& o) const { return OpSet(lo & o.lo, hi & o.hi); }
  constexpr OpSet operator~() const { return OpSet(~lo, ~hi); }
  constexpr bool operator==(const OpSet& o) const { return lo == o.lo && hi == o.hi; }
  // first op in enum order (for UPats with a single op)
  Ops first() const;

 private:
  constexpr OpSet(uint64_t l, uint64_t h) : lo(l), hi(h) {}
};

// ops(Ops::ADD, Ops::MUL): an OpSet from a list, comma-safe inside rule macros
template <typename... T>
constexpr OpSet ops(T... o) {
  return OpSet{o...};
}

namespace GroupOp {
constexpr OpSet Unary{Ops::EXP2, Ops::LOG2, Ops::SIN, Ops::SQRT, Ops::RECIPROCAL, Ops::NEG, Ops::TRUNC};
constexpr OpSet Binary{Ops::ADD, Ops::MUL, Ops::CDIV, Ops::MAX, Ops::CMOD, Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ, Ops::XOR,
                       Ops::SHL, Ops::SHR, Ops::OR, Ops::AND, Ops::THREEFRY, Ops::SUB, Ops::FDIV, Ops::POW,
                       Ops::FLOORDIV, Ops::FLOORMOD};
constexpr OpSet Ternary{Ops::WHERE, Ops::MULACC};
constexpr OpSet ALU = Unary | Binary | Ternary;
constexpr OpSet Broadcastable = Binary | Ternary;
constexpr OpSet Elementwise = ALU | OpSet{Ops::CAST, Ops::BITCAST};
constexpr OpSet Defines{Ops::PARAM, Ops::BUFFER};
constexpr OpSet Irreducible{Ops::CONST, Ops::SPECIAL, Ops::RANGE, Ops::PARAM, Ops::GETADDR};
constexpr OpSet Movement{Ops::RESHAPE, Ops::EXPAND, Ops::PERMUTE, Ops::PAD, Ops::SHRINK, Ops::FLIP};
constexpr OpSet Commutative{Ops::ADD, Ops::MUL, Ops::MAX, Ops::CMPNE, Ops::CMPEQ, Ops::XOR, Ops::AND, Ops::OR};
constexpr OpSet Associative{Ops::ADD, Ops::MUL, Ops::AND, Ops::OR, Ops::MAX};
constexpr OpSet Idempotent{Ops::OR, Ops::AND, Ops::MAX};
constexpr OpSet Reduce{Ops::ADD, Ops::MUL, Ops::MAX};
constexpr OpSet Comparison{Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ};
OpSet all();
}  // namespace GroupOp

// AxisType (uop/ops.py), values as the reference's Enum auto()
enum class AxisType : uint8_t {
  DEVICE = 1, GLOBAL, WARP, LOCAL, WEAK, GROUP_REDUCE, REDUCE, UPCAST, UNROLL, THREAD, PLACEHOLDER, LOOP
};
const char* axis_type_name(AxisType a);   // "REDUCE"
char axis_letter(AxisType a);             // g/t/l/w/L/u/G/R/r/d

}  // namespace tg
