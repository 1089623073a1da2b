#include "lib/uop/ops.h"

#include <string_view>
#include <unordered_map>

#include "lib/helpers.h"

namespace tg {

static const char* const kOpNames[] = {nullptr, "SPECIAL", "BUFFER", "NOOP", "REWRITE_ERROR", "PARAM", "FUNCTION", "CALL", "PROGRAM", "LINEAR", "SOURCE", "BINARY", "SINK", "AFTER", "GROUP", "STACK", "TUPLE", "GETTUPLE", "GETADDR", "INDEX", "SHRINK", "LOAD", "STORE", "WMMA", "CAST", "BITCAST", "EXP2", "LOG2", "SIN", "SQRT", "RECIPROCAL", "NEG", "TRUNC", "ADD", "MUL", "SHL", "SHR", "CDIV", "MAX", "CMOD", "CMPLT", "CMPNE", "CMPEQ", "XOR", "OR", "AND", "THREEFRY", "SUB", "FDIV", "POW", "FLOORDIV", "FLOORMOD", "WHERE", "MULACC", "BARRIER", "RANGE", "IF", "END", "ENDIF", "WAIT", "CONST", "CUSTOM", "CUSTOMI", "INS", "CONTIGUOUS", "CONTIGUOUS_BACKWARD", "DETACH", "STAGE", "COPY", "MSELECT", "MSTACK", "CUSTOM_FUNCTION", "RESHAPE", "PERMUTE", "EXPAND", "PAD", "FLIP", "UNSHARD", "REDUCE", "ALLREDUCE", "PYLITERAL"};

const char* op_name(Ops op) { return kOpNames[(int)op]; }
std::string op_repr(Ops op) { return std::string("Ops.") + kOpNames[(int)op]; }
Ops op_from_name(const std::string& name) {
  // by name, from a table made once (decoding a golden graph or a corpus asks this for every node)
  static const auto* const by_name = [] {
    auto* m = new std::unordered_map<std::string_view, Ops>();
    for (int i = 1; i <= NUM_OPS; i++) m->emplace(kOpNames[i], (Ops)i);
    return m;
  }();
  std::string_view n = name;
  if (n.starts_with("Ops.")) n.remove_prefix(4);
  if (auto it = by_name->find(n); it != by_name->end()) return it->second;
  throw Error("unknown op '" + name + "'");
}

Ops OpSet::first() const {
  if (lo) return (Ops)__builtin_ctzll(lo);
  return (Ops)(64 + __builtin_ctzll(hi));
}

OpSet GroupOp::all() {
  OpSet s;
  for (int i = 1; i <= NUM_OPS; i++) s.add((Ops)i);
  return s;
}

const char* axis_type_name(AxisType a) {
  static const char* const n[] = {"?", "DEVICE", "GLOBAL", "WARP", "LOCAL", "WEAK", "GROUP_REDUCE", "REDUCE", "UPCAST",
                                  "UNROLL", "THREAD", "PLACEHOLDER", "LOOP"};
  return n[(int)a];
}
char axis_letter(AxisType a) {
  switch (a) {
    case AxisType::DEVICE: return 'd';
    case AxisType::GLOBAL: return 'g';
    case AxisType::THREAD: return 't';
    case AxisType::LOCAL: return 'l';
    case AxisType::WARP: return 'w';
    case AxisType::WEAK: return 'L';
    case AxisType::LOOP: return 'L';
    case AxisType::UPCAST: return 'u';
    case AxisType::GROUP_REDUCE: return 'G';
    case AxisType::REDUCE: return 'R';
    case AxisType::UNROLL: return 'r';
    default: return '?';
  }
}

}  // namespace tg
