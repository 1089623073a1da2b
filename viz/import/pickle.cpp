#include "viz/import/pickle.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace tg::viz::pickle {

namespace {

// module -> names: the classes and reconstructors a VIZ pickle of the reference holds (found by disassembling real
// rewrites.pkl and profile.pkl files with pickletools), plus the renderers a codegen context's TracingKey.ret may be
struct Allowed {
  const char* module;
  std::vector<const char*> names;
};
const std::vector<Allowed>& allow_list() {
  static const std::vector<Allowed> list = {
      {"tinygrad.uop.ops",
       {"RewriteTrace", "TrackedGraphRewrite", "UOp", "AxisType", "KernelInfo", "ParamArg", "CallInfo", "ProgramInfo"}},
      {"tinygrad.uop", {"Ops"}},
      {"tinygrad.dtype", {"DType", "PtrDType", "ImageDType", "AddrSpace", "ConstFloat", "InvalidType"}},
      {"tinygrad.helpers", {"TracingKey", "Target", "Metadata", "ProfileRangeEvent", "ProfilePointEvent"}},
      {"tinygrad.device", {"ProfileDeviceEvent", "ProfileProgramEvent", "ProfileGraphEvent", "ProfileGraphEntry"}},
      {"tinygrad.codegen.opt", {"Opt", "OptOps"}},
      {"tinygrad.schedule.indexing", {"BufferizeOpts"}},
      {"tinygrad.renderer", {"Estimates", "Renderer"}},
      {"tinygrad.renderer.cstyle",
       {"ClangRenderer", "OpenCLRenderer", "MetalRenderer", "CUDARenderer", "NVCCRenderer", "HIPRenderer",
        "HIPCCRenderer", "QCOMCLRenderer"}},
      {"tinygrad.renderer.llvmir", {"LLVMRenderer", "CPULLVMRenderer", "AMDLLVMRenderer"}},
      {"tinygrad.renderer.ptx", {"PTXRenderer"}},
      {"tinygrad.renderer.wgsl", {"WGSLRenderer"}},
      {"tinygrad.renderer.nir", {"NIRRenderer", "NAKRenderer", "LVPRenderer", "IR3Renderer"}},
      {"tinygrad.runtime.support.hcq2", {"HCQInfo"}},
      {"decimal", {"Decimal"}},
      // what pickle itself uses for plain objects of protocol 2 (object.__reduce_ex__); never called here
      {"copyreg", {"_reconstructor"}},
      {"builtins", {"object"}},
  };
  return list;
}

std::string printable(std::string_view s, size_t max = 80) {
  std::string out;
  for (size_t i = 0; i < s.size() && out.size() < max; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 32 && c < 127) {
      out += (char)c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

// little-endian two's complement bytes -> decimal text (ints wider than 64 bits: LONG1 / LONG4)
std::string long_to_decimal(std::string_view b) {
  bool neg = !b.empty() && ((unsigned char)b.back() & 0x80);
  std::vector<uint8_t> mag(b.begin(), b.end());  // little-endian magnitude
  if (neg) {                                     // two's complement negate
    unsigned carry = 1;
    for (uint8_t& x : mag) {
      unsigned v = (uint8_t)~x + carry;
      x = (uint8_t)v;
      carry = v >> 8;
    }
  }
  std::string digits;
  while (!mag.empty() && mag.back() == 0) mag.pop_back();
  while (!mag.empty()) {
    unsigned rem = 0;
    for (size_t i = mag.size(); i-- > 0;) {
      unsigned cur = rem << 8 | mag[i];
      mag[i] = (uint8_t)(cur / 10);
      rem = cur % 10;
    }
    digits += (char)('0' + rem);
    while (!mag.empty() && mag.back() == 0) mag.pop_back();
  }
  if (digits.empty()) digits = "0";
  if (neg) digits += '-';
  std::reverse(digits.begin(), digits.end());
  return digits;
}

}  // namespace

bool allowed_global(std::string_view module, std::string_view name) {
  for (const Allowed& a : allow_list())
    if (module == a.module)
      for (const char* n : a.names)
        if (name == n) return true;
  return false;
}

class Machine {
 public:
  Machine(std::string_view data, const std::string& what, const Limits& lim) : d_(data), what_(what) {
    max_values_ = std::min<uint64_t>(lim.max_values, (uint64_t)data.size() * 2 + 16);
  }

  Pickle run() {
    while (pos_ < d_.size()) {
      op_at_ = pos_;
      uint8_t op = byte();
      if (dispatch(op)) {
        if (stack_.empty()) fail("STOP with an empty stack");
        p_.root_ = stack_.back();
        return std::move(p_);
      }
    }
    op_at_ = pos_;
    fail("the pickle ends without STOP (truncated?)");
  }

 private:
  std::string_view d_;
  const std::string& what_;
  size_t pos_ = 0, op_at_ = 0;
  uint64_t max_values_;
  Pickle p_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, uint32_t> memo_;

  [[noreturn]] void fail(const std::string& why) const {
    throw PickleError("pickle '" + what_ + "': byte " + std::to_string(op_at_) + ": " + why);
  }
  void need(size_t n) const {
    if (n > d_.size() - pos_)
      fail("needs " + std::to_string(n) + " more bytes, the file has " + std::to_string(d_.size() - pos_) +
           " (truncated?)");
  }
  uint8_t byte() {
    need(1);
    return (uint8_t)d_[pos_++];
  }
  uint64_t le(size_t n) {
    need(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v |= (uint64_t)(uint8_t)d_[pos_ + i] << (8 * i);
    pos_ += n;
    return v;
  }
  std::string_view take(uint64_t n) {
    if (n > d_.size() - pos_)
      fail("a length of " + std::to_string(n) + " bytes, past the end of the file (" +
           std::to_string(d_.size() - pos_) + " bytes left)");
    std::string_view s = d_.substr(pos_, (size_t)n);
    pos_ += (size_t)n;
    return s;
  }
  std::string_view line() {  // text operand of GLOBAL: up to '\n'
    size_t e = d_.find('\n', pos_);
    if (e == std::string_view::npos) fail("a text operand without its end of line (truncated?)");
    std::string_view s = d_.substr(pos_, e - pos_);
    pos_ = e + 1;
    return s;
  }

  uint32_t make(Value v) {
    if (p_.values_.size() >= max_values_) fail("more values than a file of this size can hold");
    p_.values_.push_back(std::move(v));
    return (uint32_t)(p_.values_.size() - 1);
  }
  uint32_t make(Kind k) {
    if (is_container(k)) return container(k);
    Value v;
    v.kind = k;
    return make(std::move(v));
  }
  void push(uint32_t v) { stack_.push_back(v); }
  uint32_t pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail("pops past the stack's bottom or its MARK");
    uint32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  uint32_t top() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) fail("reads an empty stack");
    return stack_.back();
  }
  // the items above the last MARK, which is popped
  std::vector<uint32_t> pop_mark() {
    if (marks_.empty()) fail("needs a MARK and there is none");
    size_t m = marks_.back();
    marks_.pop_back();
    std::vector<uint32_t> items(stack_.begin() + (ptrdiff_t)m, stack_.end());
    stack_.resize(m);
    return items;
  }
  Value& val(uint32_t v) { return p_.values_[v]; }
  std::string_view str_of(uint32_t v) { return p_.str(v); }
  static bool is_container(Kind k) {
    return k == Kind::Tuple || k == Kind::List || k == Kind::Set || k == Kind::FrozenSet || k == Kind::Dict;
  }
  std::vector<uint32_t>& items_of(uint32_t v) { return p_.lists_[val(v).u0]; }
  uint32_t container(Kind k, std::vector<uint32_t> items = {}) {
    Value v;
    v.kind = k;
    v.u0 = (uint32_t)p_.lists_.size();
    uint32_t id = make(std::move(v));
    p_.lists_.push_back(std::move(items));
    return id;
  }
  uint32_t text(Kind k, std::string_view s) {
    if (p_.text_.size() + s.size() > 0xffffffffull) fail("more text than 4 GB");
    Value v;
    v.kind = k;
    v.u0 = (uint32_t)p_.text_.size(), v.u1 = (uint32_t)s.size();
    p_.text_.append(s.data(), s.size());
    return make(std::move(v));
  }
  void memo_put(uint64_t idx) { memo_[idx] = top(); }
  void memo_get(uint64_t idx) {
    auto it = memo_.find(idx);
    if (it == memo_.end()) fail("memo entry " + std::to_string(idx) + " does not exist");
    push(it->second);
  }
  uint32_t tuple_of(std::vector<uint32_t> items) { return container(Kind::Tuple, std::move(items)); }
  uint32_t int_value(int64_t i) {
    Value v;
    v.kind = Kind::Int;
    v.i = i;
    return make(std::move(v));
  }
  uint32_t long_value(std::string_view bytes) {
    if (bytes.size() > 64) fail("an integer of " + std::to_string(bytes.size()) + " bytes (at most 64 are read)");
    if (bytes.size() <= 8) {
      uint64_t u = 0;
      for (size_t i = 0; i < bytes.size(); i++) u |= (uint64_t)(uint8_t)bytes[i] << (8 * i);
      if (!bytes.empty() && bytes.size() < 8 && ((uint8_t)bytes.back() & 0x80)) u |= ~0ull << (8 * bytes.size());
      return int_value((int64_t)u);
    }
    return text(Kind::BigInt, long_to_decimal(bytes));
  }
  uint32_t str_value(Kind k, std::string_view s) { return text(k, s); }
  void global(std::string_view module, std::string_view name) {
    if (!allowed_global(module, name))
      fail("refused global " + printable(module) + "." + printable(name) +
           ": not one of the reference's classes a VIZ pickle holds (nothing in a pickle is executed)");
    push(text(Kind::Global, std::string(module) + "." + std::string(name)));
  }
  uint32_t object(uint32_t cls, uint32_t args) {
    if (val(cls).kind != Kind::Global) fail("calls something that is not an allowed class");
    std::string name(str_of(cls));
    if (args != kNoValue && val(args).kind != Kind::Tuple)
      fail("calls " + name + " with arguments that are not a tuple");
    Value v;
    v.kind = Kind::Object;
    v.u0 = cls;
    v.u1 = args;
    // copyreg._reconstructor(cls, base, state): an instance of cls with that state (never called)
    if (name == "copyreg._reconstructor") {
      const std::vector<uint32_t>& a = items_of(args);
      if (a.size() != 3 || val(a[0]).kind != Kind::Global) fail("copyreg._reconstructor without (class, base, state)");
      v.u0 = a[0];
      v.u1 = kNoValue;
      if (val(a[2]).kind != Kind::None) v.u2 = a[2];
    } else if (name == "builtins.object") {
      fail("builtins.object is only read as copyreg._reconstructor's base");
    }
    return make(std::move(v));
  }
  void append(uint32_t list, const std::vector<uint32_t>& items) {
    Kind k = val(list).kind;
    if (k != Kind::List) fail("APPEND(S) to a value that is not a list");
    auto& dst = items_of(list);
    dst.insert(dst.end(), items.begin(), items.end());
  }
  void set_items(uint32_t dict, const std::vector<uint32_t>& kv) {
    if (val(dict).kind != Kind::Dict) fail("SETITEM(S) on a value that is not a dict");
    if (kv.size() % 2) fail("SETITEMS with an odd number of items");
    auto& dst = items_of(dict);
    dst.insert(dst.end(), kv.begin(), kv.end());
  }

  // one opcode; true at STOP
  bool dispatch(uint8_t op) {
    switch (op) {
      case 0x80: {  // PROTO
        uint8_t v = byte();
        if (v < 2 || v > 5) fail("protocol " + std::to_string(v) + " (protocols 2 to 5 are read)");
        return false;
      }
      case 0x95: {  // FRAME: the length of the next frame (checked, then read as a stream)
        uint64_t n = le(8);
        if (n > d_.size() - pos_)
          fail("a frame of " + std::to_string(n) + " bytes, past the end of the file (truncated?)");
        return false;
      }
      case '.':
        return true;  // STOP
      case '(':
        marks_.push_back(stack_.size());
        return false;  // MARK
      case '0':
        pop();
        return false;  // POP
      case '1':
        pop_mark();
        return false;  // POP_MARK
      case '2':
        push(top());
        return false;  // DUP
      case 'N':
        push(make(Kind::None));
        return false;
      case 0x88:
      case 0x89: {  // NEWTRUE, NEWFALSE
        Value v;
        v.kind = Kind::Bool;
        v.b = op == 0x88;
        push(make(std::move(v)));
        return false;
      }
      case 'J':
        push(int_value((int32_t)(uint32_t)le(4)));
        return false;  // BININT
      case 'K':
        push(int_value((int64_t)le(1)));
        return false;  // BININT1
      case 'M':
        push(int_value((int64_t)le(2)));
        return false;  // BININT2
      case 0x8a:
        push(long_value(take(le(1))));
        return false;  // LONG1
      case 0x8b: {     // LONG4
        int32_t n = (int32_t)(uint32_t)le(4);
        if (n < 0) fail("LONG4 with a negative length");
        push(long_value(take((uint64_t)n)));
        return false;
      }
      case 'G': {  // BINFLOAT: big-endian double
        need(8);
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++) bits = bits << 8 | (uint8_t)d_[pos_ + i];
        pos_ += 8;
        Value v;
        v.kind = Kind::Float;
        std::memcpy(&v.f, &bits, 8);
        push(make(std::move(v)));
        return false;
      }
      case 0x8c:
        push(str_value(Kind::Str, take(le(1))));
        return false;  // SHORT_BINUNICODE
      case 'X':
        push(str_value(Kind::Str, take(le(4))));
        return false;  // BINUNICODE
      case 0x8d:
        push(str_value(Kind::Str, take(le(8))));
        return false;  // BINUNICODE8
      case 'U':
        push(str_value(Kind::Str, take(le(1))));
        return false;  // SHORT_BINSTRING
      case 'T': {      // BINSTRING
        int32_t n = (int32_t)(uint32_t)le(4);
        if (n < 0) fail("BINSTRING with a negative length");
        push(str_value(Kind::Str, take((uint64_t)n)));
        return false;
      }
      case 'C':
        push(str_value(Kind::Bytes, take(le(1))));
        return false;  // SHORT_BINBYTES
      case 'B':
        push(str_value(Kind::Bytes, take(le(4))));
        return false;  // BINBYTES
      case 0x8e:
        push(str_value(Kind::Bytes, take(le(8))));
        return false;  // BINBYTES8
      case 0x96:
        push(str_value(Kind::Bytes, take(le(8))));
        return false;  // BYTEARRAY8
      case ')':
        push(tuple_of({}));
        return false;  // EMPTY_TUPLE
      case 't':
        push(tuple_of(pop_mark()));
        return false;  // TUPLE
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        size_t n = op - 0x84;
        std::vector<uint32_t> items(n);
        for (size_t i = n; i-- > 0;) items[i] = pop();
        push(tuple_of(std::move(items)));
        return false;
      }
      case ']':
        push(make(Kind::List));
        return false;  // EMPTY_LIST
      case 'l':
        push(container(Kind::List, pop_mark()));
        return false;  // LIST
      case 'a': {      // APPEND
        uint32_t x = pop();
        append(top(), {x});
        return false;
      }
      case 'e': {  // APPENDS
        std::vector<uint32_t> items = pop_mark();
        append(top(), items);
        return false;
      }
      case '}':
        push(make(Kind::Dict));
        return false;  // EMPTY_DICT
      case 'd': {      // DICT
        std::vector<uint32_t> kv = pop_mark();
        if (kv.size() % 2) fail("DICT with an odd number of items");
        push(container(Kind::Dict, std::move(kv)));
        return false;
      }
      case 's': {  // SETITEM
        uint32_t v = pop(), k = pop();
        set_items(top(), {k, v});
        return false;
      }
      case 'u': {  // SETITEMS
        std::vector<uint32_t> kv = pop_mark();
        set_items(top(), kv);
        return false;
      }
      case 0x8f:
        push(make(Kind::Set));
        return false;  // EMPTY_SET
      case 0x90: {     // ADDITEMS
        std::vector<uint32_t> items = pop_mark();
        uint32_t s = top();
        if (val(s).kind != Kind::Set) fail("ADDITEMS to a value that is not a set");
        items_of(s).insert(items_of(s).end(), items.begin(), items.end());
        return false;
      }
      case 0x91:
        push(container(Kind::FrozenSet, pop_mark()));
        return false;  // FROZENSET
      case 'c': {      // GLOBAL module\nname\n
        std::string_view m = line(), n = line();
        global(m, n);
        return false;
      }
      case 0x93: {  // STACK_GLOBAL
        uint32_t n = pop(), m = pop();
        if (val(m).kind != Kind::Str || val(n).kind != Kind::Str) fail("STACK_GLOBAL of values that are not strings");
        global(std::string(str_of(m)), std::string(str_of(n)));
        return false;
      }
      case 'R': {  // REDUCE
        uint32_t args = pop(), cls = pop();
        push(object(cls, args));
        return false;
      }
      case 0x81: {  // NEWOBJ
        uint32_t args = pop(), cls = pop();
        push(object(cls, args));
        return false;
      }
      case 0x92: {  // NEWOBJ_EX
        uint32_t kwargs = pop(), args = pop(), cls = pop();
        if (val(kwargs).kind != Kind::Dict) fail("NEWOBJ_EX with keyword arguments that are not a dict");
        uint32_t o = object(cls, args);
        if (!items_of(kwargs).empty()) val(o).u2 = kwargs;
        push(o);
        return false;
      }
      case 'b': {  // BUILD
        uint32_t state = pop();
        uint32_t o = top();
        if (val(o).kind != Kind::Object) fail("BUILD on a value that is not an object");
        if (val(o).u2 != kNoValue) fail("BUILD on an object that already has its state");
        val(o).u2 = state;
        return false;
      }
      case 0x94:
        memo_put(memo_.size());
        return false;  // MEMOIZE
      case 'q':
        memo_put(le(1));
        return false;  // BINPUT
      case 'r':
        memo_put(le(4));
        return false;  // LONG_BINPUT
      case 'h':
        memo_get(le(1));
        return false;  // BINGET
      case 'j':
        memo_get(le(4));
        return false;  // LONG_BINGET
      case 'i':
      case 'o':
        fail(std::string("opcode ") + (op == 'i' ? "INST" : "OBJ") + " (a protocol 0/1 instantiation) is not read");
      case 0x82:
      case 0x83:
      case 0x84:
        fail("extension registry opcodes (EXT1/2/4) are not read");
      case 'P':
      case 'Q':
        fail("persistent ids (PERSID/BINPERSID) are not read");
      case 0x97:
      case 0x98:
        fail("out-of-band buffers (NEXT_BUFFER/READONLY_BUFFER) are not read");
      case 'I':
      case 'L':
      case 'F':
      case 'S':
      case 'V':
      case 'p':
      case 'g':
        fail(std::string("text opcode '") + (char)op + "' of protocol 0 is not read (protocols 2 to 5 are)");
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "0x%02x", op);
        fail(std::string("unknown opcode ") + buf);
      }
    }
  }
};

Pickle load(std::string_view data, const std::string& what, const Limits& limits) {
  Machine m(data, what, limits);
  return m.run();
}

const Value& Pickle::at(uint32_t v) const {
  if (v >= values_.size()) throw PickleError("pickle value " + std::to_string(v) + " does not exist");
  return values_[v];
}

std::string_view Pickle::str(uint32_t v) const {
  const Value& x = at(v);
  if (x.kind != Kind::Str && x.kind != Kind::Bytes && x.kind != Kind::BigInt && x.kind != Kind::Global) return {};
  return std::string_view(text_).substr(x.u0, x.u1);
}

const std::vector<uint32_t>& Pickle::items(uint32_t v) const {
  static const std::vector<uint32_t> none;
  const Value& x = at(v);
  switch (x.kind) {
    case Kind::Tuple:
    case Kind::List:
    case Kind::Set:
    case Kind::FrozenSet:
    case Kind::Dict:
      return lists_[x.u0];
    default:
      return none;
  }
}

std::string_view Pickle::class_of(uint32_t v) const {
  const Value& x = at(v);
  if (x.kind != Kind::Object) return {};
  return str(x.cls());
}

uint32_t Pickle::dict_get(uint32_t dict, std::string_view key) const {
  if (at(dict).kind != Kind::Dict) return kNoValue;
  const std::vector<uint32_t>& d = items(dict);
  // a record's state has a few fields: a dict of thousands read as one (shared by many objects of a hostile file)
  // would make every lookup a long scan
  if (d.size() > 2 * kMaxLookupKeys) return kNoValue;
  for (size_t i = d.size(); i >= 2; i -= 2)  // the last one set wins, as in Python
    if (at(d[i - 2]).kind == Kind::Str && str(d[i - 2]) == key) return d[i - 1];
  return kNoValue;
}

uint32_t Pickle::field(uint32_t obj, std::string_view name) const {
  const Value& o = at(obj);
  if (o.kind != Kind::Object || o.state() == kNoValue) return kNoValue;
  const Value& st = at(o.state());
  if (st.kind == Kind::Dict) return dict_get(o.state(), name);
  // (dict or None, slots dict)
  const std::vector<uint32_t>& t = items(o.state());
  if (st.kind == Kind::Tuple && t.size() == 2) {
    uint32_t r = dict_get(t[1], name);
    return r != kNoValue ? r : dict_get(t[0], name);
  }
  return kNoValue;
}

uint32_t Pickle::arg(uint32_t obj, size_t i) const {
  const Value& o = at(obj);
  if (o.kind != Kind::Object || o.args() == kNoValue) return kNoValue;
  const std::vector<uint32_t>& a = items(o.args());
  return i < a.size() ? a[i] : kNoValue;
}

size_t Pickle::num_args(uint32_t obj) const {
  const Value& o = at(obj);
  if (o.kind != Kind::Object || o.args() == kNoValue) return 0;
  return items(o.args()).size();
}

}  // namespace tg::viz::pickle
