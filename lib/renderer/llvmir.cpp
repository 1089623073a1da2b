#include "lib/renderer/llvmir.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "lib/helpers.h"
#include "lib/renderer/cstyle.h"
#include "lib/uop/kernel_info.h"

namespace tg {

using S = std::optional<std::string>;

// one string from the parts, allocated once (a chain of `+` reallocates as the string grows)
template <typename... A>
static std::string cat(const A&... a) {
  const std::string_view parts[] = {std::string_view(a)...};
  size_t len = 0;
  for (std::string_view p : parts) len += p.size();
  std::string out;
  out.reserve(len);
  for (std::string_view p : parts) out.append(p);
  return out;
}

static std::string make_ldt(DType dt, pyint count, bool ptr) {
  if (ptr) return ldt(dt, count) + "*";
  if (count > 1) return "<" + pyint_str(count) + " x " + ldt(dt, 1) + ">";
  using namespace dtypes;
  if (dt == void_) return "void";
  if (dt == bool_) return "i1";
  if (dt == int8 || dt == uint8 || dt == fp8e4m3 || dt == fp8e5m2) return "i8";
  if (dt == int16 || dt == uint16) return "i16";
  if (dt == int32 || dt == uint32) return "i32";
  if (dt == int64 || dt == uint64) return "i64";
  if (dt == float16) return "half";
  if (dt == bfloat16) return "bfloat";
  if (dt == float32) return "float";
  if (dt == float64) return "double";
  throw Error("ldt: no LLVM type for " + dt.repr());
}

const std::string& ldt(DType dt, pyint count, bool ptr) {
  // a scalar's name, the usual ask, by dtype id (the names live in the map below, whose strings never move)
  thread_local std::array<const std::string*, 64> scalar{};
  const int id = dt.id();
  const bool plain = count == 1 && !ptr && id >= 0 && id < 64;
  if (plain && scalar[id]) return *scalar[id];
  struct Key {
    const void* dt;
    pyint count;
    bool ptr;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.dt) ^ ((size_t)k.count * 0x9e3779b97f4a7c15ULL) ^ (size_t)k.ptr;
    }
  };
  thread_local std::unordered_map<Key, std::string, KeyHash> names;  // strings never move (node-based map)
  Key k{dt.data(), count, ptr};
  auto it = names.find(k);
  if (it == names.end()) {
    std::string v = make_ldt(dt, count, ptr);  // may recurse into ldt (inserting): look up again after
    it = names.emplace(k, std::move(v)).first;
  }
  if (plain) scalar[id] = &it->second;
  return it->second;
}

std::string lconst(const PyConst& x, DType dtype) {
  if (contains(dtypes::floats, dtype)) {
    if (contains(dtypes::fp8s, dtype)) return std::to_string(float_to_fp8(x.as_float(), dtype));
    double v = x.as_float();
    if (std::isinf(v) || std::isnan(v)) {
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      char buf[24];
      std::snprintf(buf, sizeof(buf), "0x%016llX", (unsigned long long)bits);
      return buf;
    }
    return truncate(dtype, PyConst(v)).str();
  }
  return pyint_str(x.as_int());
}

std::string lcast(DType input_type, DType output_type) {
  if (dtypes::is_float(input_type)) {
    if (dtypes::is_float(output_type)) return output_type.itemsize() > input_type.itemsize() ? "fpext" : "fptrunc";
    if (dtypes::is_int(output_type)) return dtypes::is_unsigned(output_type) ? "fptoui" : "fptosi";
  }
  if (dtypes::is_unsigned(input_type) || dtypes::is_bool(input_type)) {
    if (dtypes::is_float(output_type)) return "uitofp";
    if (dtypes::is_int(output_type)) return output_type.itemsize() < input_type.itemsize() ? "trunc" : "zext";
  }
  if (dtypes::is_int(input_type)) {
    if (dtypes::is_float(output_type)) return "sitofp";
    if (dtypes::is_int(output_type)) return output_type.itemsize() < input_type.itemsize() ? "trunc" : "sext";
  }
  throw Error("cast from " + input_type.repr() + " -> " + output_type.repr() + " not implemented");
}

// llvm ops, lop[<dtype>][<op>] (literals: nothing allocated per instruction)
static std::string_view lop(DType dt, Ops op) {
  // the dtype's class by its id (1 float, 2 signed, 3 unsigned or bool, 4 none of them; 0 not known yet)
  thread_local std::array<uint8_t, 64> classes{};
  const int id = dt.id();
  uint8_t c = id >= 0 && id < 64 ? classes[id] : 0;
  if (!c) {
    c = contains(dtypes::floats, dt)                         ? 1
        : contains(dtypes::sints, dt)                        ? 2
        : dt == dtypes::bool_ || contains(dtypes::uints, dt) ? 3
                                                             : 4;
    if (id >= 0 && id < 64) classes[id] = c;
  }
  bool is_float = c == 1, is_signed = c == 2, is_unsigned = c == 3;
  if (is_float) {
    switch (op) {
      case Ops::ADD:
        return "fadd nsz arcp contract afn";
      case Ops::MUL:
        return "fmul nsz arcp contract afn";
      case Ops::CMPLT:
        return "fcmp nsz arcp contract afn olt";
      case Ops::CMPNE:
        return "fcmp nsz arcp contract afn une";
      case Ops::CMPEQ:
        return "fcmp nsz arcp contract afn oeq";
      case Ops::FDIV:
        return "fdiv nsz arcp contract afn";
      default:
        break;
    }
  } else if (is_signed || is_unsigned) {
    switch (op) {
      case Ops::ADD:
        return is_signed ? "add nsw" : "add";
      case Ops::MUL:
        return "mul";
      case Ops::CDIV:
        return is_signed ? "sdiv" : "udiv";
      case Ops::CMOD:
        return is_signed ? "srem" : "urem";
      case Ops::CMPLT:
        return is_signed ? "icmp slt" : "icmp ult";
      case Ops::CMPNE:
        return "icmp ne";
      case Ops::CMPEQ:
        return "icmp eq";
      case Ops::OR:
        return "or";
      case Ops::AND:
        return "and";
      case Ops::XOR:
        return "xor";
      case Ops::SHL:
        return "shl";
      case Ops::SHR:
        return is_signed ? "ashr" : "lshr";
      default:
        break;
    }
  }
  throw Error(std::string("no LLVM op for ") + op_repr(op) + " on " + dt.repr());
}
const std::string& LLVMContext::operator[](U u) const {
  const std::string* name = r.find(u);
  if (!name) throw Error(std::string("render: no name for ") + op_repr(u.op()));
  return *name;
}

void LLVMContext::declare(const std::string& decl) {
  if (std::find(decls.begin(), decls.end(), decl) == decls.end()) decls.push_back(decl);
}

// the type suffix of an overloaded intrinsic on a scalar: float -> f32 (the LLVM renderer's ALU is scalar)
static std::string mangle(DType dt) {
  std::string t = dt == dtypes::float16    ? "f16"
                  : dt == dtypes::bfloat16 ? "bf16"
                  : dt == dtypes::float64  ? "f64"
                                           : "f32";
  return t;
}

static bool is_volatile(const UOp& u) {
  UOp b = buf_uop(u);
  return b.op() == Ops::PARAM && b.param_arg()->volatile_;
}
static std::string vol(const UOp& idx) { return is_volatile(idx) ? "volatile " : ""; }
static std::string strip1(const std::string& s) { return s.substr(1); }

const StringMatcher& llvm_base_rewrite() {
  using C = LLVMContext;
  static const StringMatcher pm(
      "llvm_base_rewrite",
      {
          // memory load/store
          TG_RULE(UPat(ops(Ops::INDEX, Ops::SHRINK))
                      .src(UPat(ops(Ops::BUFFER, Ops::PARAM, Ops::AFTER)))
                      .any_len()
                      .named("x"),
                  [](C* ctx, U x) -> S {
                    C& r = *ctx;
                    return cat("  ", r[x], " = getelementptr inbounds ", ldt(x.dtype()), ", ", ldt(x.dtype(), 1, true),
                               " ", r[x.src(0)], ", ", ldt(x.src(1).dtype()), " ", r[x.src(1)]);
                  }),
          // register index
          TG_RULE(UPat(Ops::INDEX).src(UPat::var("buf"), UPat::cvar("c").cast()).named("x"),
                  [](C* ctx, U buf, U c, U x) -> S {
                    if (ctx->as.get(buf) != AddrSpace::ALU) return std::nullopt;
                    return "  " + (*ctx)[x] + " = extractelement " + ldt(buf.dtype(), max_numel(buf)) + " " +
                           (*ctx)[buf] + ", i32 " + c.val().str();
                  }),

          // load/store
          TG_RULE(UPat(Ops::LOAD).src(UPat::var("idx"), UPat::var("alt"), UPat::var("mask")).named("x"),
                  [](C* ctx, U x, U idx, U alt, U mask) -> S {
                    C& r = *ctx;
                    const std::string& n = r[x];
                    return "  br label " + n + "_entry\n" + strip1(n) + "_entry:\n" + "  br i1 " + r[mask] +
                           ", label " + n + "_load, label " + n + "_exit\n" + strip1(n) + "_load:\n" + "  " + n +
                           "_yes = load " + vol(idx) + ldt(idx.dtype(), max_numel(idx)) + ", " +
                           ldt(idx.dtype(), max_numel(idx), true) + " " + r[idx] + "\n" + "  br label " + n +
                           "_exit\n" + strip1(n) + "_exit:\n" + "  " + n + " = phi " + ldt(x.dtype(), max_numel(x)) +
                           " [" + n + "_yes, " + n + "_load], [" + r[alt] + ", " + n + "_entry]";
                  }),
          TG_RULE(UPat::var("idx").load().named("x"),
                  [](C* ctx, U x, U idx) -> S {
                    C& r = *ctx;
                    pyint n = max_numel(idx);
                    return cat("  ", r[x], " = load ", vol(idx), ldt(idx.dtype(), n), ", ", ldt(idx.dtype(), n, true),
                               " ", r[idx]);
                  }),
          TG_RULE(UPat::var("idx").store(UPat::var("var")),
                  [](C* ctx, U idx, U var) -> S {
                    C& r = *ctx;
                    pyint n = max_numel(idx);
                    return cat("  store ", vol(idx), ldt(var.dtype(), n), " ", r[var], ", ", ldt(idx.dtype(), n, true),
                               " ", r[idx]);
                  }),

          // GEP/VECTORIZE/CAST for float4 support
          TG_RULE(UPat(Ops::STACK).named("x"),
                  [](C* ctx, U x) -> S {
                    C& r = *ctx;
                    std::string out;
                    size_t n = x.nsrc();
                    for (size_t i = 0; i < n; i++) {
                      const UOp& u = x.src(i);
                      if (i) out += "\n";
                      out += (i + 1 != n ? "  " + r[x] + "_" + std::to_string(i) : "  " + r[x]) + " = insertelement " +
                             ldt(x.dtype(), max_numel(x)) + " " +
                             (i != 0 ? r[x] + "_" + std::to_string(i - 1) : "poison") + ", " + ldt(u.dtype()) + " " +
                             r[u] + ", i32 " + std::to_string(i);
                    }
                    return out;
                  }),
          // unary/binary/ternary ops
          TG_RULE(UPat(Ops::BITCAST).named("x"),
                  [](C* ctx, U x) -> S {
                    C& r = *ctx;
                    return "  " + r[x] + " = bitcast " + ldt(x.src(0).dtype(), max_numel(x.src(0))) + " " +
                           r[x.src(0)] + " to " + ldt(x.dtype(), max_numel(x));
                  }),
          TG_RULE(UPat(Ops::CAST).named("x"),
                  [](C* ctx, U x) -> S {
                    C& r = *ctx;
                    return cat("  ", r[x], " = ", lcast(x.src(0).dtype(), x.dtype()), " ", ldt(x.src(0).dtype()), " ",
                               r[x.src(0)], " to ", ldt(x.dtype()));
                  }),
          TG_RULE(UPat(Ops::TRUNC).named("x"),
                  [](C* ctx, U x) -> S {
                    C& r = *ctx;
                    return "  " + r[x] + " = call " + ldt(x.dtype()) + " @llvm.trunc." + ldt(x.dtype()) + "(" +
                           ldt(x.src(0).dtype()) + " " + r[x.src(0)] + ")";
                  }),
          TG_RULE(UPat(GroupOp::Binary).named("x"),
                  [](C* ctx, U x) -> S {
                    C& r = *ctx;
                    return cat("  ", r[x], " = ", lop(x.src(0).dtype(), x.op()), " ", ldt(x.src(0).dtype()), " ",
                               r[x.src(0)], ", ", r[x.src(1)]);
                  }),
          TG_RULE(UPat(Ops::WHERE).named("x"),
                  [](C* ctx, U x) -> S {
                    C& r = *ctx;
                    return cat("  ", r[x], " = select ", ldt(x.src(0).dtype()), " ", r[x.src(0)], ", ",
                               ldt(x.src(1).dtype()), " ", r[x.src(1)], ", ", ldt(x.src(2).dtype()), " ", r[x.src(2)]);
                  }),

          // loop (a RANGE with no src is an unbounded loop header)
          TG_RULE(UPat(Ops::RANGE).dtype(dtypes::void_).named("l"),
                  [](C* ctx, U l) -> S {
                    std::string n = strip1((*ctx)[l]);
                    return "  br label %loop_" + n + "\nloop_" + n + ":";
                  }),
          TG_RULE(UPat(Ops::END).src(UPat(), UPat(Ops::RANGE).dtype(dtypes::void_).named("l"), UPat().named("c")),
                  [](C* ctx, U l, U c) -> S {
                    std::string n = strip1((*ctx)[l]);
                    return "  br i1 " + (*ctx)[c] + ", label %loop_" + n + ", label %loop_exit_" + n + "\nloop_exit_" +
                           n + ":";
                  }),

          // range
          TG_RULE(UPat(Ops::RANGE).named("r"),
                  [](C* ctx, U r) -> S {
                    std::string rs = range_str(r), n = (*ctx)[r], t = ldt(r.dtype());
                    return "  br label %loop_entry_" + rs + "\n" + "loop_entry_" + rs + ":\n" +
                           "  br label %loop_latch_" + rs + "\n" + "loop_latch_" + rs + ":\n" + "  " + n + " = phi " +
                           t + " [ 0, %loop_entry_" + rs + " ], [ " + n + "phi, %loop_footer_" + rs + " ]\n" + "  " +
                           n + "phi = add " + t + " " + n + ", 1\n" + "  " + n + "cmp = icmp ult " + t + " " + n +
                           ", " + (*ctx)[r.src(0)] + "\n" + "  br i1 " + n + "cmp, label %loop_body_" + rs +
                           ", label %loop_exit_" + rs + "\n" + "loop_body_" + rs + ":";
                  }),
          TG_RULE(UPat(Ops::END).src(UPat(), UPat(Ops::RANGE).named("r")),
                  [](U r) -> S {
                    std::string rs = range_str(r);
                    return "  br label %loop_footer_" + rs + "\n" + "loop_footer_" + rs + ":\n" +
                           "  br label %loop_latch_" + rs + "\n" + "loop_exit_" + rs + ":";
                  }),

          // if
          TG_RULE(UPat(Ops::IF).named("x"),
                  [](C* ctx, U x) -> S {
                    std::string n = strip1((*ctx)[x]);
                    return "  br i1 " + (*ctx)[x.src(0)] + ", label %ifbody_" + n + ", label %ifskip_" + n +
                           "\nifbody_" + n + ":";
                  }),
          TG_RULE(UPat(Ops::ENDIF).named("x"),
                  [](C* ctx, U x) -> S {
                    std::string n = strip1((*ctx)[x.src(0)]);
                    return "  br label %ifskip_" + n + "\nifskip_" + n + ":";
                  }),

          TG_RULE(UPat(Ops::BARRIER), []() -> S { return "  fence seq_cst"; }),
      });
  return pm;
}

// clang numerics. The C renderer writes an ALU uop used once (not a WHERE) into its user's expression, and strips the
// parens of a same-op operand of ADD/MUL: ADD(a, ADD(b, c)) is the text (a+b+c), which C evaluates as (a+b)+c. clang
// then fuses a product that is a direct operand of an addition into llvm.fmuladd (-ffp-contract=on).
static int uses_of(LLVMContext& r, const UOp& u) {
  const int* n = r.uses.find(u);
  return n ? *n : 0;
}
static bool c_inlined(LLVMContext& r, const UOp& u) {
  return GroupOp::ALU.has(u.op()) && u.op() != Ops::WHERE && uses_of(r, u) == 1;
}
// s's terms join x's in the C text (float ADD/MUL of one dtype)
static bool c_flattens(LLVMContext& r, const UOp& x, const UOp& s) {
  return s.op() == x.op() && s.dtype() == x.dtype() && c_inlined(r, s);
}
// the operands of x's C expression (a+b+c...), evaluated left to right
static void c_terms(LLVMContext& r, const UOp& x, std::vector<UOp>& out) {
  for (const UOp& s : x.src()) {
    if (c_flattens(r, x, s))
      c_terms(r, s, out);
    else
      out.push_back(s);
  }
}
// the name of the k-th partial result of x's left fold over n+1 terms (the last is x itself)
static std::string c_partial(LLVMContext& r, const UOp& x, const std::vector<UOp>& terms, size_t k) {
  if (k == 0) return r[terms[0]];
  return k + 1 == terms.size() ? r[x] : r[x] + "_" + std::to_string(k);
}
// t as clang sees it in an addition: an fmul written into the expression, with its operands (a, b)
static bool c_product(LLVMContext& r, const UOp& x, const UOp& t, std::string& a, std::string& b) {
  if (t.op() != Ops::MUL || t.dtype() != x.dtype() || !c_inlined(r, t)) return false;
  std::vector<UOp> mt;
  c_terms(r, t, mt);
  a = c_partial(r, t, mt, mt.size() - 2), b = r[mt.back()];
  return true;
}
// x is written into a same-op user's expression: the user evaluates it (nothing to emit)
static bool c_absorbed(LLVMContext& r, const UOp& x) {
  if (!c_inlined(r, x)) return false;
  const UOp* user = r.user.find(x);
  return user && c_flattens(r, *user, x);
}

const StringMatcher& llvm_clang_rewrite() {
  using C = LLVMContext;
  static const StringMatcher pm(
      "llvm_clang_rewrite",
      {
          TG_RULE(UPat(ops(Ops::ADD, Ops::MUL)).dtype(dtypes::floats).named("x"),
                  [](C* ctx, U x) -> S {
                    C& r = *ctx;
                    if (c_absorbed(r, x)) return std::string();
                    std::string t = ldt(x.dtype()), out;
                    std::vector<UOp> terms;
                    c_terms(r, x, terms);
                    for (size_t k = 1; k < terms.size(); k++) {
                      std::string prev = c_partial(r, x, terms, k - 1), name = c_partial(r, x, terms, k), a, b;
                      if (!out.empty()) out += "\n";
                      out += "  " + name + " = ";
                      // clang's tryEmitFMulAdd: a product as the left operand first (only the first term can be one),
                      // then the right
                      if (x.op() == Ops::ADD &&
                          ((k == 1 && c_product(r, x, terms[0], a, b) && (prev = r[terms[1]], true)) ||
                           c_product(r, x, terms[k], a, b))) {
                        std::string fn = "@llvm.fmuladd." + mangle(x.dtype());
                        r.declare("declare " + t + " " + fn + "(" + t + ", " + t + ", " + t + ")");
                        out += "call " + t + " " + fn + "(" + t + " " + a + ", " + t + " " + b + ", " + t + " " + prev +
                               ")";
                      } else {
                        out +=
                            std::string(x.op() == Ops::ADD ? "fadd " : "fmul ") + t + " " + prev + ", " + r[terms[k]];
                      }
                    }
                    return out;
                  }),
          TG_RULE(UPat(Ops::SUB).dtype(dtypes::floats).named("x"),
                  [](C* ctx, U x) -> S {
                    C& r = *ctx;
                    std::string t = ldt(x.dtype()), a, b;
                    std::string fn = "@llvm.fmuladd." + mangle(x.dtype());
                    auto call = [&](const std::string& m0, const std::string& m1, const std::string& c) {
                      r.declare("declare " + t + " " + fn + "(" + t + ", " + t + ", " + t + ")");
                      return "  " + r[x] + " = call " + t + " " + fn + "(" + t + " " + m0 + ", " + t + " " + m1 + ", " +
                             t + " " + c + ")";
                    };
                    // (a*b)-c is fmuladd(a, b, -c); c-(a*b) is fmuladd(-a, b, c)
                    if (c_product(r, x, x.src(0), a, b))
                      return "  " + r[x] + "_n = fneg " + t + " " + r[x.src(1)] + "\n" + call(a, b, r[x] + "_n");
                    if (c_product(r, x, x.src(1), a, b))
                      return "  " + r[x] + "_n = fneg " + t + " " + a + "\n" + call(r[x] + "_n", b, r[x.src(0)]);
                    return "  " + r[x] + " = fsub " + t + " " + r[x.src(0)] + ", " + r[x.src(1)];
                  }),
          TG_RULE(UPat(Ops::FDIV).dtype(dtypes::floats).named("x"),
                  [](C* ctx, U x) -> S {
                    C& r = *ctx;
                    return "  " + r[x] + " = fdiv " + ldt(x.dtype()) + " " + r[x.src(0)] + ", " + r[x.src(1)];
                  }),
          TG_RULE(UPat(ops(Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ)).src(UPat::var("a", dtypes::floats), UPat()).named("x"),
                  [](C* ctx, U x, U a) -> S {
                    C& r = *ctx;
                    const char* cc = x.op() == Ops::CMPLT ? "olt" : x.op() == Ops::CMPNE ? "une" : "oeq";
                    return "  " + r[x] + " = fcmp " + cc + " " + ldt(a.dtype()) + " " + r[a] + ", " + r[x.src(1)];
                  }),
          TG_RULE(UPat(Ops::NEG).named("x"),
                  [](C* ctx, U x) -> S {
                    C& r = *ctx;
                    std::string t = ldt(x.dtype());
                    if (contains(dtypes::floats, x.dtype())) return "  " + r[x] + " = fneg " + t + " " + r[x.src(0)];
                    return "  " + r[x] + " = sub " + t + " 0, " + r[x.src(0)];
                  }),
          TG_RULE(UPat(Ops::SUB).named("x"),
                  [](C* ctx, U x) -> S {
                    C& r = *ctx;
                    bool is_signed = contains(dtypes::sints, x.dtype());
                    return "  " + r[x] + " = " + (is_signed ? "sub nsw " : "sub ") + ldt(x.dtype()) + " " +
                           r[x.src(0)] + ", " + r[x.src(1)];
                  }),
          TG_RULE(UPat(Ops::SQRT).named("x"),
                  [](C* ctx, U x) -> S {
                    C& r = *ctx;
                    std::string t = ldt(x.dtype()), fn = "@llvm.sqrt." + mangle(x.dtype());
                    r.declare("declare " + t + " " + fn + "(" + t + ")");
                    return "  " + r[x] + " = call " + t + " " + fn + "(" + t + " " + r[x.src(0)] + ")";
                  }),
      });
  return pm;
}

LLVMRenderer::LLVMRenderer(Target t) : Renderer(std::move(t)) {
  // code_for_op: every op some dtype has an instruction for (only the keys matter)
  for (Ops op : {Ops::ADD, Ops::MUL, Ops::CDIV, Ops::CMOD, Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ, Ops::OR, Ops::AND,
                 Ops::XOR, Ops::SHL, Ops::SHR, Ops::FDIV})
    code_for_op.set(op, [](const std::vector<std::string>&, DType) -> std::string {
      throw Error("LLVMRenderer renders through its string rules");
    });
  extra_matcher = &llvm_extra_matcher();
}

const PatternMatcher& LLVMRenderer::llvm_extra_matcher() {
  static const PatternMatcher pm = create_non_native_float_pats({dtypes::bfloat16}) + pm_manual_bf16_cast();
  return pm;
}

std::string LLVMRenderer::render_fn(const std::string& name, const std::vector<std::pair<std::string, UOp>>& args,
                                    const std::vector<std::string>& kernel,
                                    const std::vector<std::string>& prefix) const {
  // NOTE: CPUAllocator promises 0x20 alignment
  std::string sargs;
  for (size_t i = 0; i < args.size(); i++) {
    const auto& [n, u] = args[i];
    bool global = addrspace(u) == AddrSpace::GLOBAL;
    sargs += (i ? ", " : "") + ldt(u.dtype(), 1, global) + (global ? " noalias align 32" : "") + " " + n;
  }
  // the prefix, the signature, "{", the kernel's lines, "  ret void\n}", joined by newlines (sized once)
  std::string head = cat("define", abi.empty() ? "" : " ", abi, " void @", name, "(", sargs, ") #0");
  const std::string_view open = "{", close = "  ret void\n}";
  size_t len = head.size() + open.size() + close.size() + prefix.size() + kernel.size() + 2;
  for (const std::string& l : prefix) len += l.size();
  for (const std::string& l : kernel) len += l.size();
  std::string out;
  out.reserve(len);
  for (const std::string& l : prefix) out.append(l).push_back('\n');
  out.append(head).push_back('\n');
  out.append(open).push_back('\n');
  for (const std::string& l : kernel) out.append(l).push_back('\n');
  out.append(close);
  return out;
}

std::pair<std::vector<std::string>, std::string> LLVMRenderer::render_kernel(
    const std::vector<UOp>& uops, const std::vector<std::string>& prefix) const {
  LLVMContext ctx(uops.size(), clang_numerics);
  auto& r = ctx.r;
  std::vector<std::pair<std::string, UOp>> args;
  std::vector<std::string> kernel, local_args;
  int64_t vc = -1;
  std::string name = "test";
  if (clang_numerics) {  // the C renderer's child_count, and the one user of each uop used once
    for (const UOp& u : uops)
      for (const UOp& x : u.src()) ctx.uses[x]++;
    for (const UOp& u : uops)
      for (const UOp& x : u.src())
        if (ctx.uses[x] == 1) ctx.user[x] = u;
  }
  for (const UOp& u : uops) {
    Ops op = u.op();
    if (op == Ops::NOOP || op == Ops::GROUP || op == Ops::CONST) continue;
    if (op == Ops::AFTER) {
      std::string name = ctx[u.src(0)];  // a copy: adding u's entry may move the map's values
      r[u] = std::move(name);
      continue;
    }
    if (op == Ops::SINK) {
      if (!u.arg().is_none()) {
        const KernelInfo* k = u.arg().as<KernelInfo>();
        if (!k) throw Error("render: the SINK's arg is not a KernelInfo");
        name = k->function_name();
      }
      continue;
    }
    if (op == Ops::PARAM) {
      r[u] = "%data" + std::to_string(u.param_arg()->slot);
      args.push_back({r[u], u});
    } else if (op == Ops::BUFFER) {
      auto as = ctx.as.get(u);
      r[u] = std::string("%") + (as == AddrSpace::LOCAL ? "local" : "reg") + "_" + std::to_string(u.param_arg()->slot);
      std::string size = pyint_str(max_numel(u));
      if (as == AddrSpace::REG) {
        kernel.push_back("  " + r[u] + " = alloca [" + size + " x " + ldt(u.dtype()) + "]");
      } else if (has_local) {
        std::string g = r[u].substr(1);
        local_args.push_back("@" + g + " = internal unnamed_addr addrspace(3) global [" + size + " x " +
                             ldt(u.dtype()) + "] undef, align 16");
        kernel.push_back("  " + r[u] + " = addrspacecast [" + size + " x " + ldt(u.dtype()) + "] addrspace(3)* @" + g +
                         " to [" + size + " x " + ldt(u.dtype()) + "]*");
      } else {
        kernel.push_back("  " + r[u] + " = alloca [" + size + " x " + ldt(u.dtype()) + "], align 16");
      }
    } else if (op == Ops::CAST && u.src(0).op() == Ops::CONST) {
      r[u] = lconst(u.src(0).val(), u.dtype());
    } else if (op == Ops::CAST && ldt(u.dtype()) == ldt(u.src(0).dtype())) {
      std::string name = ctx[u.src(0)];  // cast from signed to unsigned of the same size is a noop, or pointer cast
      r[u] = std::move(name);
    } else {
      // if it's an assign target, it's already preallocated
      if (!r.find(u)) r[u] = "%v" + std::to_string(++vc);
      // do the rendering of the llvm ir code
      S l = string_rewrite->rewrite(u, CtxRef(&ctx));
      if (!l) {
        std::string srcs;
        for (const UOp& x : u.src()) srcs += std::string(srcs.empty() ? "" : ", ") + x.dtype().repr();
        throw Error(std::string("failed to render ") + op_repr(op) + " with " + u.dtype().repr() + " srcs [" + srcs +
                    "]");
      }
      kernel.push_back(std::move(*l));
    }
  }
  std::vector<std::string> pre = prefix;
  pre.insert(pre.end(), ctx.decls.begin(), ctx.decls.end());
  return {local_args, render_fn(name, args, kernel, pre)};
}

CPULLVMRenderer::CPULLVMRenderer(Target t, bool clang) : LLVMRenderer(std::move(t)) {
  clang_numerics = clang;
  has_local = false;
  has_threads = getenv_int("THREADS", 1) != 0;
  global_max = std::vector<pyint>{NUM_CPU_THREADS.value(), 0, 0};
  string_rewrite = &llvm_base_rewrite();
  if (clang_numerics) {
    static const StringMatcher with_clang = llvm_clang_rewrite() + llvm_base_rewrite();
    string_rewrite = &with_clang;
    // the ClangRenderer's native ops (its code_for_op keys beyond the LLVM renderer's): decompositions match its own
    for (Ops op : {Ops::SQRT, Ops::NEG, Ops::SUB, Ops::TRUNC, Ops::WHERE})
      code_for_op.set(op, [](const std::vector<std::string>&, DType) -> std::string {
        throw Error("LLVMRenderer renders through its string rules");
      });
  }
}

std::string CPULLVMRenderer::render(const std::vector<UOp>& uops) const {
  auto [local_args, fn] = render_kernel(uops);
  const std::string footer = render_footer(uops);
  // the local args, the function and the footer, joined by newlines in one string sized once (the function is the
  // kernel's whole text: each `+` copied it)
  size_t len = fn.size() + 1 + footer.size();
  for (const std::string& l : local_args) len += l.size() + 1;
  std::string out;
  out.reserve(len);
  for (const std::string& l : local_args) out.append(l).push_back('\n');
  out.append(fn).push_back('\n');
  out.append(footer);
  return out;
}

std::string CPULLVMRenderer::render_footer(const std::vector<UOp>&) const {
  return "attributes #0 = { alwaysinline nounwind \"no-builtins\" \"no-trapping-math\"=\"true\" }";
}

std::vector<DType> CPULLVMRenderer::supported_dtypes() const {
  // FIXME in the reference: fp16 works on non-osx, but only if the cpu supports it
  std::vector<DType> r;
  bool bf16 = target.arch.rfind("x86", 0) == 0 || target.arch.rfind("arm", 0) == 0;
#ifdef __APPLE__
  const bool osx = true;
#else
  const bool osx = false;
#endif
  for (DType d : LLVMRenderer::supported_dtypes())
    if ((d != dtypes::bfloat16 || bf16) && (d != dtypes::float16 || osx) && !contains(dtypes::fp8s, d)) r.push_back(d);
  return r;
}

}  // namespace tg
