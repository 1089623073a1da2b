#include "lib/renderer/cstyle.h"

#include <cmath>
#include <cstring>
#include <map>

#include "lib/helpers.h"
#include "lib/uop/kernel_info.h"

namespace tg {

using S = std::optional<std::string>;

const std::string& CStyleContext::operator[](U u) const {
  auto it = r.find(u);
  if (it == r.end()) throw Error(std::string("render: no name for ") + op_repr(u.op()));
  return it->second;
}

static std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string r;
  for (size_t i = 0; i < v.size(); i++) r += (i ? sep : "") + v[i];
  return r;
}
static std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

std::string py_format(const std::string& fmt, const std::vector<std::string>& args) {
  std::string r;
  size_t auto_idx = 0;
  for (size_t i = 0; i < fmt.size(); i++) {
    char c = fmt[i];
    if (c == '{' && i + 1 < fmt.size() && fmt[i + 1] == '{')
      r += '{', i++;
    else if (c == '}' && i + 1 < fmt.size() && fmt[i + 1] == '}')
      r += '}', i++;
    else if (c == '{') {
      size_t e = fmt.find('}', i);
      if (e == std::string::npos) throw Error("bad format string: " + fmt);
      std::string field = fmt.substr(i + 1, e - i - 1);
      size_t k = field.empty() ? auto_idx++ : std::stoul(field);
      if (k >= args.size()) throw Error("format string needs more args: " + fmt);
      r += args[k];
      i = e;
    } else
      r += c;
  }
  return r;
}

// WMMA_<dims>_<dtype in>_<dtype out>, spaces sanitized
static std::string wmma_name(const UOp& u) {
  std::string r = "WMMA_";
  const Arg& dims = u.arg()[0];
  for (size_t i = 0; i < dims.size(); i++) r += (i ? "_" : "") + dims[i].str();
  r += std::string("_") + u.arg()[1].as_dtype().name() + "_" + u.dtype().name();
  return replace_all(r, " ", "_");
}

static bool is_finite(const PyConst& v) { return !v.is_float() || std::isfinite(v.f); }

const StringMatcher& cstyle_base_rewrite() {
  using C = CStyleContext;
  static const StringMatcher pm(
      "base_rewrite",
      {
          // local/reg buffers
          TG_RULE(UPat(Ops::BUFFER).named("x"), [](C* ctx, U x) -> S { return ctx->lang->render_buffer(*ctx, x); }),

          // range/loop/if/endif
          TG_RULE(UPat(Ops::RANGE).dtype(dtypes::void_).named("x"), []() -> S { return "for (;;) {"; }),
          TG_RULE(UPat(Ops::RANGE).named("x"),
                  [](C* ctx, U x) -> S {
                    const std::string& n = (*ctx)[x];
                    return "for (" + ctx->lang->render_dtype(x.dtype()) + " " + n + " = 0; " + n + " < " +
                           (*ctx)[x.src(0)] + "; " + n + "++) {";
                  }),
          TG_RULE(UPat(Ops::END).src(UPat(), UPat(Ops::RANGE), UPat().named("c").dtype(dtypes::bool_)),
                  [](C* ctx, U c) -> S { return "  if (!(" + (*ctx)[c] + ")) { break; }\n}"; }),
          TG_RULE(UPat(Ops::IF).named("x"), [](C* ctx, U x) -> S { return "if (" + (*ctx)[x.src(0)] + ") {"; }),
          TG_RULE(UPat(ops(Ops::ENDIF, Ops::END)), []() -> S { return "}"; }),

          // const
          TG_RULE(UPat::cvar("c").cast(dtypes::floats).named("x"),
                  [](C* ctx, U x, U c) -> S {
                    PyConst v = c.val();
                    if (is_finite(v)) return std::nullopt;
                    const CStyleLanguage& l = *ctx->lang;
                    return "(" +
                           l.render_cast(*ctx, x,
                                         std::isnan(v.f) ? l.nan
                                         : v.f > 0       ? l.infinity
                                                         : "-" + l.infinity) +
                           ")";
                  }),
          TG_RULE(UPat::cvar("c").cast(dtypes::float32), [](U c) -> S { return c.val().str() + "f"; }),
          TG_RULE(UPat::cvar("c").cast(dtypes::int64), [](U c) -> S { return c.val().str() + "l"; }),
          TG_RULE(UPat::cvar("c").cast(dtypes::uint64).named("x"),
                  [](U x, U c) -> S { return truncate(x.dtype(), c.val()).str() + "ul"; }),
          TG_RULE(UPat::cvar("c").cast(dtypes::uint32).named("x"),
                  [](U x, U c) -> S { return truncate(x.dtype(), c.val()).str() + "u"; }),
          TG_RULE(UPat::cvar("c").cast(dtypes::bool_), [](U c) -> S { return c.val().truthy() ? "1" : "0"; }),
          // consts are rendered to larger type and casted
          TG_RULE(
              UPat::cvar("c").cast(dtypes::fp8s + DTypes{dtypes::bfloat16, dtypes::float16}).named("x"),
              [](C* ctx, U x, U c) -> S { return "(" + ctx->lang->render_cast(*ctx, x, c.val().str() + "f") + ")"; }),
          TG_RULE(
              UPat::cvar("c").cast(DTypes{dtypes::uint8, dtypes::uint16}).named("x"),
              [](C* ctx, U x, U c) -> S { return "(" + ctx->lang->render_cast(*ctx, x, c.val().str() + "u") + ")"; }),
          TG_RULE(UPat::cvar("c").cast(DTypes{dtypes::int8, dtypes::int16}).named("x"),
                  [](C* ctx, U x, U c) -> S { return "(" + ctx->lang->render_cast(*ctx, x, c.val().str()) + ")"; }),
          // default const render
          TG_RULE(UPat::cvar("c").cast(), [](U c) -> S { return c.val().str(); }),

          // casting
          TG_RULE(UPat(Ops::CAST).named("x"),
                  [](C* ctx, U x) -> S {
                    if (max_numel(x) > 1 && ctx->addrspace(x) == AddrSpace::REG)
                      return "__builtin_convertvector(" + (*ctx)[x.src(0)] + ", " + ctx->lang->render_type(*ctx, x) +
                             ")";
                    return std::nullopt;
                  }),
          TG_RULE(UPat(Ops::CAST).named("x"),
                  [](C* ctx, U x) -> S { return "(" + ctx->lang->render_cast(*ctx, x, (*ctx)[x.src(0)]) + ")"; }),
          TG_RULE(UPat(Ops::BITCAST).named("x"),
                  [](C* ctx, U x) -> S {
                    auto as = ctx->addrspace(x);
                    if (as != AddrSpace::GLOBAL && as != AddrSpace::LOCAL) return std::nullopt;
                    return "((" + ctx->lang->render_dtype_full(x.dtype(), 1, as) + ")(" + (*ctx)[x.src(0)] + "))";
                  }),
          TG_RULE(UPat(Ops::BITCAST).named("x"),
                  [](C* ctx, U x) -> S {
                    const CStyleLanguage& l = *ctx->lang;
                    return "__builtin_bit_cast(" + l.render_type(*ctx, x) + ", (" + l.render_type(*ctx, x.src(0)) +
                           ")(" + (*ctx)[x.src(0)] + "))";
                  }),

          // GPU stuff
          TG_RULE(UPat(Ops::BARRIER), [](C* ctx) -> S { return ctx->lang->barrier; }),
          TG_RULE(UPat(Ops::SPECIAL).named("x"),
                  [](C* ctx, U x) -> S {
                    const std::string& a = x.arg().as_str();
                    return ctx->lang->code_for_workitem_of(a.front(), std::string(1, a.back())) + "; /* " +
                           x.src(0).render() + " */";
                  }),

          // SHRINK/INDEX
          TG_RULE(UPat(Ops::INDEX).src(UPat::var("buf"), UPat::var("idx")).named("x"),
                  [](C* ctx, U x, U buf, U idx) -> S { return ctx->lang->render_index(*ctx, x, buf, idx); }),
          TG_RULE(UPat(Ops::SHRINK).src(UPat::var("buf"), UPat::var("idx"), UPat::cvar().cast()).named("x"),
                  [](C* ctx, U x, U buf, U idx) -> S { return ctx->lang->render_index(*ctx, x, buf, idx); }),
          TG_RULE(UPat(Ops::STACK).named("x"),
                  [](C* ctx, U x) -> S {
                    const CStyleLanguage& l = *ctx->lang;
                    if (!l.float4) throw Error("this language has no vector constructor (float4 is None)");
                    std::vector<std::string> el;
                    for (const UOp& y : x.src()) el.push_back((*ctx)[y]);
                    return replace_all(*l.float4, "float4", l.render_type(*ctx, x)) + l.float4_style.first +
                           join(el, ",") + l.float4_style.second;
                  }),

          // load/store
          TG_RULE(UPat(Ops::LOAD).src(UPat::var("bidx")),
                  [](C* ctx, U bidx) -> S { return "(" + ctx->lang->render_access(*ctx, bidx) + ")"; }),
          TG_RULE(UPat(Ops::LOAD).src(UPat::var("bidx"), UPat::var("var"), UPat::var("gate")),
                  [](C* ctx, U bidx, U var, U gate) -> S {
                    return "(" + (*ctx)[gate] + "?" + ctx->lang->render_access(*ctx, bidx) + ":" + (*ctx)[var] + ")";
                  }),
          TG_RULE(UPat(Ops::STORE).src(UPat::var("bidx"), UPat::var("var")),
                  [](C* ctx, U bidx, U var) -> S {
                    return ctx->lang->render_access(*ctx, bidx) + " = " + (*ctx)[var] + ";";
                  }),

          // alu/gep
          TG_RULE(UPat(Ops::WMMA).named("x"),
                  [](C* ctx, U x) -> S {
                    return "__" + wmma_name(x) + "(" + (*ctx)[x.src(0)] + ", " + (*ctx)[x.src(1)] + ", " +
                           (*ctx)[x.src(2)] + ")";
                  }),
          TG_RULE(UPat(GroupOp::ALU).named("x"),
                  [](C* ctx, U x) -> S {
                    static constexpr OpSet kStrip{Ops::ADD, Ops::MUL, Ops::XOR, Ops::OR, Ops::AND};
                    std::vector<std::string> operands;
                    for (const UOp& v : x.src())
                      operands.push_back(v.op() == x.op() && kStrip.has(x.op()) ? strip_parens((*ctx)[v]) : (*ctx)[v]);
                    return ctx->lang->code_for_op.at(x.op())(operands, x.dtype());
                  }),

          // call an external function
          TG_RULE(UPat(Ops::CALL).src(UPat()).any_len().named("x"),
                  [](C* ctx, U x) -> S {
                    const CStyleLanguage& l = *ctx->lang;
                    std::vector<std::string> types, args;
                    for (size_t i = 1; i < x.nsrc(); i++) {
                      types.push_back(l.render_type(*ctx, x.src(i)));
                      args.push_back("(" + types.back() + ")(" + (*ctx)[x.src(i)] + ")");
                    }
                    return "(((" + l.abi + l.render_dtype(x.dtype()) + "(*)(" + join(types, ", ") + "))(" +
                           (*ctx)[x.src(0)] + "))(" + join(args, ", ") + "))" + (x.dtype() == dtypes::void_ ? ";" : "");
                  }),

          // custom passes through with format
          TG_RULE(UPat(ops(Ops::CUSTOM, Ops::CUSTOMI)).named("x"),
                  [](C* ctx, U x) -> S {
                    std::vector<std::string> args;
                    for (const UOp& y : x.src()) args.push_back((*ctx)[y]);
                    return py_format(x.arg().as_str(), args);
                  }),
      });
  return pm;
}

PatternMatcher create_non_native_float_pats(const DTypes& dts, bool casting) {
  PatternMatcher patterns(
      "non_native_float",
      {
          TG_RULE(UPat(Ops::WHERE).dtype(dts).src(UPat::var("b"), UPat::var("x"), UPat::var("y")).named("w"),
                  [](U w, U b, U x, U y) {
                    return b.where(x.cast(dtypes::float32), y.cast(dtypes::float32)).cast(w.dtype());
                  }),
          TG_RULE(UPat(GroupOp::ALU - ops(Ops::WHERE)).dtype(dts).named("x"),
                  [](U x) {
                    std::vector<UOp> src;
                    for (const UOp& vv : x.src()) src.push_back(vv.cast(dtypes::float32));
                    return UOp(x.op(), DType(), src, x.arg()).cast(x.dtype());
                  }),
          TG_RULE(UPat(GroupOp::ALU).dtype(dtypes::bool_).src(UPat::var("x", dts), UPat::var("y", dts)).named("alu"),
                  [](U alu, U x, U y) {
                    return UOp(alu.op(), DType(), {x.cast(dtypes::float32), y.cast(dtypes::float32)}, alu.arg());
                  }),
      });
  if (casting) {
    // add float intermediate casting
    patterns = patterns +
               PatternMatcher(
                   "non_native_float_casts",
                   {
                       TG_RULE(UPat(Ops::CAST).dtype(dts).src(UPat::var("x")).named("y"),
                               [](U x, U y) {
                                 return x.dtype() != dtypes::float32 ? x.cast(dtypes::float32).cast(y.dtype()) : UOp();
                               }),
                       TG_RULE(UPat(Ops::CAST).src(UPat::var("y", dts)).named("x"),
                               [](U x, U y) {
                                 return x.dtype() != dtypes::float32 ? y.cast(dtypes::float32).cast(x.dtype()) : UOp();
                               }),
                   });
  }
  return patterns;
}

UOp cast_float_to_bf16(const UOp& x0) {
  if (x0.dtype() != dtypes::float32) throw Error("cast float -> bf16 must start with float");
  UOp x = x0.bitcast(dtypes::uint32);
  x = ((-x) & 0x7f800000)
          .ne(UOp::const_(0))
          .where(x + ((x >> 16) & 1) + 0x7fff, (x & 0xffff).ne(UOp::const_(0)).where(x | 0x10000, x));
  return (x >> 16).cast(dtypes::uint16).bitcast(dtypes::bfloat16);
}

const PatternMatcher& pm_manual_bf16_cast() {
  static const PatternMatcher pm(
      "pm_manual_bf16_cast",
      {
          TG_RULE(UPat(Ops::CAST).dtype(dtypes::float32).src(UPat::var("x", dtypes::bfloat16)),
                  [](U x) { return (x.bitcast(dtypes::uint16).cast(dtypes::uint32) << 16).bitcast(dtypes::float32); }),
          TG_RULE(UPat(Ops::CAST).dtype(dtypes::bfloat16).src(UPat::var("x", dtypes::float32)),
                  [](U x) { return cast_float_to_bf16(x); }),
      });
  return pm;
}

std::vector<std::pair<DType, pyint>> uops_to_dtypes(const std::vector<UOp>& uops) {
  std::vector<std::pair<DType, pyint>> r;
  AddrSpaceCache as;
  for (const UOp& u : uops) {
    auto a = as.get(u);
    if ((a && *a != AddrSpace::ALU) || u.dtype() == dtypes::void_ || !u.shape_opt()) continue;
    std::pair<DType, pyint> p{u.dtype(), max_numel(u)};
    if (std::find(r.begin(), r.end(), p) == r.end()) r.push_back(p);
  }
  return r;
}

// ************************* CStyleLanguage *************************

static CodeForOp cstyle_code_for_op() {
  using V = const std::vector<std::string>&;
  return CodeForOp{
      {Ops::SQRT, [](V x, DType) { return "sqrt(" + x[0] + ")"; }},
      {Ops::RECIPROCAL, [](V x, DType) { return "(1/" + x[0] + ")"; }},
      {Ops::NEG, [](V x, DType) { return "-" + x[0]; }},
      {Ops::EXP2, [](V x, DType) { return "exp2(" + x[0] + ")"; }},
      {Ops::LOG2, [](V x, DType) { return "log2(" + x[0] + ")"; }},
      {Ops::SIN, [](V x, DType) { return "sin(" + x[0] + ")"; }},
      {Ops::TRUNC, [](V x, DType) { return "trunc(" + x[0] + ")"; }},
      {Ops::AND, [](V x, DType) { return "(" + x[0] + "&" + x[1] + ")"; }},
      {Ops::XOR, [](V x, DType) { return "(" + x[0] + "^" + x[1] + ")"; }},
      {Ops::OR, [](V x, DType) { return "(" + x[0] + "|" + x[1] + ")"; }},
      {Ops::ADD, [](V x, DType) { return "(" + x[0] + "+" + x[1] + ")"; }},
      {Ops::SUB, [](V x, DType) { return "(" + x[0] + "-" + x[1] + ")"; }},
      {Ops::MUL, [](V x, DType) { return "(" + x[0] + "*" + x[1] + ")"; }},
      {Ops::CMOD, [](V x, DType) { return "(" + x[0] + "%" + x[1] + ")"; }},
      {Ops::CDIV, [](V x, DType) { return "(" + x[0] + "/" + x[1] + ")"; }},
      {Ops::CMPNE, [](V x, DType) { return "(" + x[0] + "!=" + x[1] + ")"; }},
      {Ops::SHR, [](V x, DType) { return "(" + x[0] + ">>" + x[1] + ")"; }},
      {Ops::SHL, [](V x, DType) { return "(" + x[0] + "<<" + x[1] + ")"; }},
      {Ops::CMPLT, [](V x, DType) { return "(" + x[0] + "<" + x[1] + ")"; }},
      {Ops::WHERE, [](V x, DType) { return "(" + x[0] + "?" + x[1] + ":" + x[2] + ")"; }},
      {Ops::CMPEQ, [](V x, DType) { return "(" + x[0] + "==" + x[1] + ")"; }},
  };
}

CStyleLanguage::CStyleLanguage(Target t) : Renderer(std::move(t)), string_rewrite(&cstyle_base_rewrite()) {
  code_for_op = cstyle_code_for_op();
}

std::string CStyleLanguage::code_for_workitem_of(char kind, const std::string& dim) const {
  for (const auto& [k, fn] : code_for_workitem)
    if (k == kind) return fn(dim);
  throw Error(std::string("this language has no work item '") + kind + "'");
}

std::string CStyleLanguage::render_kernel(const std::string& function_name, const std::vector<std::string>& kernel,
                                          const std::vector<BufArg>& bufs, const std::vector<UOp>& uops,
                                          const std::optional<std::vector<std::string>>& prefix) const {
  std::string tmp;
  for (const auto& [name, b] : bufs)
    if (is_image_shape(b.first.shape_opt())) {
      tmp = "const sampler_t smp = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;\n";
      break;
    }
  std::vector<std::string> args;
  for (const auto& [name, b] : bufs) {
    const auto& [u, mut] = b;
    const ParamArg* p = u.param_arg();
    auto as = addrspace(u);
    bool alu = as == AddrSpace::ALU;
    std::string t = std::string(p && p->volatile_ ? "volatile " : "") + (alu ? var_prefix : "") +
                    render_dtype_full(u.dtype(), 1, as, mut, false, u.shape_opt()) + (alu ? var_suffix : buffer_suffix);
    args.push_back(t + " " + name);
  }
  for (const std::string& e : extra_args) args.push_back(e);
  PyConst launch_bounds(1);
  for (const UOp& u : uops)
    if (u.op() == Ops::SPECIAL && u.arg().as_str().front() == 'l')
      launch_bounds = py_mul(launch_bounds, u.src(0).vmax());
  std::string prg = replace_all(kernel_typedef, "{launch_bounds}", launch_bounds.str()) + " " + function_name + "(" +
                    join(args, ", ") + ") {\n" + tmp + join(kernel, "\n") + "\n}";
  return prefix ? join(*prefix, "\n") + "\n" + prg : prg;
}

std::string CStyleLanguage::render_index(CStyleContext& ctx, const UOp& x, const UOp& buf, const UOp& idx) const {
  (void)x;
  if (ctx.addrspace(buf) == AddrSpace::ALU) {
    // this is lane access in C
    if (!(idx.op() == Ops::CAST && idx.src(0).op() == Ops::CONST)) return "(" + ctx[buf] + ")[" + ctx[idx] + "]";
    pyint v = idx.src(0).val().as_int();
    if (max_numel(buf) > gep_arr_threshold) return ctx[buf] + "[" + pyint_str(v) + "]";
    return ctx[buf] + "." + std::string(1, "xyzwabcd"[(size_t)v]);
  }
  bool add = idx.arg().kind() == Arg::Kind::Op && idx.arg().as_op() == Ops::ADD;
  return "(" + ctx[buf] + "+" + (add ? strip_parens(ctx[idx]) : ctx[idx]) + ")";
}

std::string CStyleLanguage::render_buffer(CStyleContext& ctx, const UOp& x) const {
  std::string prefix = ctx.addrspace(x) == AddrSpace::LOCAL ? smem_align + smem_prefix : "";
  return prefix + render_dtype_full(x.dtype(), 1) + " " + ctx[x] + "[" + pyint_str(max_numel(x)) + "];";
}

std::string CStyleLanguage::render_dtype_full(DType dtype, pyint sz, std::optional<AddrSpace> addrspace, bool mutable_,
                                              bool override_ptr, const std::optional<Shape>& shape) const {
  if (is_image_shape(shape)) return std::string(mutable_ ? "write_only" : "read_only") + " image2d_t";
  std::string prefix, suffix;
  bool ptr_space = addrspace == AddrSpace::LOCAL || addrspace == AddrSpace::GLOBAL;
  if (ptr_space) {
    if (addrspace == AddrSpace::LOCAL && smem_prefix_for_cast) prefix = smem_prefix;
    if (addrspace == AddrSpace::GLOBAL) prefix = buffer_prefix;
  }
  if (ptr_space || override_ptr) suffix = "*";
  std::string base = dtype.name();
  for (const auto& [d, n] : type_map)
    if (d == dtype) base = n;
  if (sz > 1) return prefix + replace_all(base, " ", "_") + pyint_str(sz) + suffix;
  return prefix + base + suffix;
}

std::string CStyleLanguage::render_type(CStyleContext& ctx, const UOp& u) const {
  return render_dtype_full(u.dtype(), max_numel(u), ctx.addrspace(u), true, false, u.shape_opt());
}
std::string CStyleLanguage::render_access(CStyleContext& ctx, const UOp& u) const {
  if (max_numel(u) > 1 || u.dtype() != u.src(0).dtype())
    return "*((" + render_dtype_full(u.dtype(), max_numel(u), ctx.addrspace(u), true, true, u.shape_opt()) + ")(" +
           ctx[u] + "))";
  return "*" + ctx[u];
}
std::string CStyleLanguage::render_cast(CStyleContext& ctx, const UOp& u, const std::string& val) const {
  return "(" + render_type(ctx, u) + ")(" + val + ")";
}
std::string CStyleLanguage::render_dtype(DType dt) const { return render_dtype_full(dt, 1, AddrSpace::REG); }

CStyleLanguage::Rendered CStyleLanguage::render_lines(const std::vector<UOp>& uops) const {
  CStyleContext ctx{this, {}, {}};
  auto& r = ctx.r;
  UOpMap<int64_t> child_count;
  for (const UOp& ru : uops)
    for (const UOp& v : ru.src()) child_count[v]++;
  // find which PARAMs are stored to with a single toposort
  std::vector<UOp> stored;
  for (const UOp& u : uops)
    if (u.op() == Ops::STORE) stored.push_back(u.src(0));
  UOpSet writable_params;
  for (const UOp& u : UOp::sink(stored).toposort([](U x) { return x.op() != Ops::END; }))
    if (u.op() == Ops::PARAM) writable_params.insert(u);
  Rendered out{"test", {}, {}};
  int depth = 1;
  std::map<std::string, int64_t> c;
  static const bool expand_ssa = getenv_int("EXPAND_SSA", 0) != 0;
  for (const UOp& u : uops) {
    Ops op = u.op();
    if (op == Ops::NOOP || op == Ops::GROUP || op == Ops::CONST) continue;
    if (op == Ops::STACK && u.nsrc() == 0) continue;
    if (op == Ops::AFTER) {
      r[u] = ctx[u.src(0)];
      continue;
    }
    if (op == Ops::SINK) {
      if (!u.arg().is_none()) {
        const KernelInfo* k = u.arg().as<KernelInfo>();
        if (!k) throw Error("render: the SINK's arg is not a KernelInfo");
        out.name = k->function_name();
      }
      continue;
    }
    if (op == Ops::PARAM) {
      std::string name = "data" + std::to_string(u.param_arg()->slot) + "_";
      const Shape& sh = u.shape();
      for (size_t i = 0; i < sh.size(); i++)
        name += (i ? "_" : "") + (sh[i].is_int() ? pyint_str(sh[i].i()) : sh[i].u().repr());
      r[u] = name;
      out.bufs.push_back({name, {u, writable_params.count(u) != 0}});
      continue;
    }
    // naming
    std::string prefix;
    if (op == Ops::SPECIAL)
      r[u] = u.arg().as_str();
    else if (op == Ops::RANGE)
      r[u] = std::string(1, axis_letter(u.arg().items().back().as_axis())) + "idx" + range_str(u);
    else {
      switch (op) {
        case Ops::WMMA:
          prefix = "wmma";
          break;
        case Ops::BUFFER:
          prefix = "buf";
          break;
        case Ops::CAST:
        case Ops::BITCAST:
        case Ops::STACK:
          prefix = "cast";
          break;
        case Ops::INDEX:
          prefix = "bidx";
          break;
        case Ops::LOAD:
          prefix = "val";
          break;
        default:
          prefix = "alu";
          break;
      }
      r[u] = prefix + std::to_string(c[prefix]);
    }
    S l = string_rewrite->rewrite(u, CtxRef(&ctx));
    if (!l) {
      std::string srcs;
      for (const UOp& x : u.src())
        srcs += std::string(srcs.empty() ? "" : ", ") + "(" + op_repr(x.op()) + ", " + x.dtype().repr() + ")";
      throw Error(std::string("failed to render ") + op_repr(op) + " " + u.dtype().repr() + " [" + srcs + "] " +
                  u.arg().repr());
    }
    if (op == Ops::ENDIF || op == Ops::END) depth--;
    auto as = ctx.addrspace(u);
    bool ptr_space = as == AddrSpace::GLOBAL || as == AddrSpace::LOCAL;
    int64_t cc = child_count.count(u) ? child_count.at(u) : 0;
    static constexpr OpSet kInlineSingle =
        (GroupOp::ALU - OpSet{Ops::WHERE}) | OpSet{Ops::STACK, Ops::CAST, Ops::BITCAST};
    bool inline_it =
        (op != Ops::CAST || max_numel(u) == 1) &&
        ((op == Ops::CAST && u.src(0).op() == Ops::CONST) || op == Ops::INDEX || op == Ops::SHRINK ||
         op == Ops::CUSTOMI || (op == Ops::LOAD && ctx.addrspace(u.src(0)) == AddrSpace::REG && cc == 1) ||
         ((op == Ops::CAST || op == Ops::BITCAST) && ptr_space) || (kInlineSingle.has(op) && cc == 1 && !expand_ssa));
    if (inline_it) {
      r[u] = *l;
    } else {
      std::string line = *l;
      if (op != Ops::RANGE && op != Ops::STORE && op != Ops::BUFFER && u.dtype() != dtypes::void_)
        line = render_type(ctx, u) + " " + r[u] + " = " + line + (op != Ops::SPECIAL ? ";" : "");
      std::string indent(2 * depth, ' '), text;
      size_t st = 0;
      for (;;) {
        size_t nl = line.find('\n', st);
        text += (st ? "\n" : "") + indent + line.substr(st, nl == std::string::npos ? std::string::npos : nl - st);
        if (nl == std::string::npos) break;
        st = nl + 1;
      }
      out.kernel.push_back(text);
      if (!prefix.empty()) c[prefix]++;  // if it was used, increment
    }
    if (op == Ops::IF || op == Ops::RANGE) depth++;
  }
  return out;
}

std::string CStyleLanguage::render(const std::vector<UOp>& uops) const {
  Rendered rd = render_lines(uops);
  return render_kernel(rd.name, rd.kernel, rd.bufs, uops);
}

// ************************* ClangRenderer *************************

ClangRenderer::ClangRenderer(Target t) : CStyleLanguage(std::move(t)) {
  float4 = "(float4)";
  float4_style = {"{", "}"};
  gep_arr_threshold = 0;
  has_local = false;
  has_threads = getenv_int("THREADS", 1) != 0;
  global_max = std::vector<pyint>{NUM_CPU_THREADS.value(), 0, 0};
  infinity = "__builtin_inff()";
  nan = "__builtin_nanf(\"\")";
  barrier = "__atomic_thread_fence(__ATOMIC_SEQ_CST);";
  buffer_suffix = " restrict";
  type_map = {{dtypes::bool_, "_Bool"}, {dtypes::float16, "__fp16"}};
  using V = const std::vector<std::string>&;
  for (Ops o : {Ops::EXP2, Ops::SIN, Ops::LOG2, Ops::TRUNC, Ops::RECIPROCAL}) code_for_op.erase(o);
  code_for_op.set(Ops::SQRT, [](V x, DType d) {
    return (d == dtypes::float64 ? "__builtin_sqrt(" : "__builtin_sqrtf(") + x[0] + ")";
  });
  code_for_op.set(Ops::TRUNC, [](V x, DType d) {
    return (d == dtypes::float64 ? "__builtin_trunc(" : "__builtin_truncf(") + x[0] + ")";
  });
  code_for_op.set(Ops::FDIV, [](V x, DType) { return "(" + x[0] + "/" + x[1] + ")"; });
  extra_matcher = &clang_extra_matcher();
}

const PatternMatcher& ClangRenderer::clang_extra_matcher() {
  // LLVM legalizes double => half/bf16 casts on CPUs without native support into a compiler-rt libcall, and there is
  // no native bf16 <-> fp16 conversion on those CPUs
  static const PatternMatcher pm =
      PatternMatcher("clang_extra_matcher",
                     {
                         TG_RULE(UPat::var("x", dtypes::float64).cast(dtypes::float16),
                                 [](U x) { return x.cast(dtypes::float32).cast(dtypes::float16); }),
                         TG_RULE(UPat::var("x", dtypes::float64).cast(dtypes::bfloat16),
                                 [](U x) { return x.cast(dtypes::float32).cast(dtypes::bfloat16); }),
                         TG_RULE(UPat::var("x", dtypes::bfloat16).cast(dtypes::float16),
                                 [](U x) { return x.cast(dtypes::float32).cast(dtypes::float16); }),
                     }) +
      create_non_native_float_pats({dtypes::bfloat16}) + pm_manual_bf16_cast();
  return pm;
}

std::string ClangRenderer::render_vector_prefix(DType dt, pyint count) const {
  // round (down) to power of two (this is actually the default clang behavior)
  static const bool aligned = getenv_int("ALIGNED", 1) != 0;
  pyint alignment = 1;
  if (aligned && dt != dtypes::bool_) {
    pyint bytes = (pyint)dt.itemsize() * count;
    while (alignment * 2 <= bytes) alignment *= 2;
  }
  std::string vec = render_dtype_full(dt, count, AddrSpace::REG);
  return "typedef " + render_dtype(dt) + " " + vec + " __attribute__((aligned(" + pyint_str(alignment) +
         "),ext_vector_type(" + pyint_str(count) + ")));";
}

std::vector<std::string> ClangRenderer::render_defines(const std::vector<UOp>& uops) const {
  std::vector<std::string> r;
  for (const auto& [dt, count] : uops_to_dtypes(uops))
    if (count > 1) r.push_back(render_vector_prefix(dt, count));
  return r;
}
std::string ClangRenderer::render_entry(const std::string&, const std::vector<BufArg>&) const { return ""; }

std::string ClangRenderer::render_kernel(const std::string& function_name, const std::vector<std::string>& kernel,
                                         const std::vector<BufArg>& bufs, const std::vector<UOp>& uops,
                                         const std::optional<std::vector<std::string>>& prefix) const {
  return join(render_defines(uops), "\n") + "\n" +
         CStyleLanguage::render_kernel(function_name, kernel, bufs, uops, prefix) + "\n" +
         render_entry(function_name, bufs);
}

std::vector<DType> ClangRenderer::supported_dtypes() const {
  std::vector<DType> r;
  bool bf16 = target.arch.rfind("x86", 0) == 0 || target.arch.rfind("arm", 0) == 0;
  for (DType d : CStyleLanguage::supported_dtypes())
    if ((d != dtypes::bfloat16 || bf16) && !contains(dtypes::fp8s, d)) r.push_back(d);
  return r;
}

// ************************* OpenCLRenderer *************************

namespace {
bool has_extension(const std::string& arch, const std::string& ext) {
  size_t p = 0;
  while (p <= arch.size()) {
    size_t e = arch.find(',', p);
    if (e == std::string::npos) e = arch.size();
    if (arch.compare(p, e - p, ext) == 0) return true;
    p = e + 1;
  }
  return false;
}

const StringMatcher& opencl_rewrite() {
  using C = CStyleContext;
  // images (IMAGE loads/stores, read_imagef) are not ported: no device here has image dtypes
  static const StringMatcher pm =
      StringMatcher("opencl_string_rewrite",
                    {
                        TG_RULE(UPat(Ops::BITCAST).named("x"),
                                [](C* ctx, U x) -> S {
                                  auto as = ctx->addrspace(x);
                                  if (as == AddrSpace::GLOBAL || as == AddrSpace::LOCAL) return std::nullopt;
                                  const CStyleLanguage& l = *ctx->lang;
                                  return "as_" + l.render_dtype(x.dtype()) + "((" + l.render_dtype(x.src(0).dtype()) +
                                         ")(" + (*ctx)[x.src(0)] + "))";
                                }),
                        // bfloat16 constants are rendered as their bit pattern since bf16 is stored as ushort
                        TG_RULE(UPat::cvar("c").cast(dtypes::bfloat16),
                                [](U c) -> S {
                                  float f = (float)float_to_bf16(c.val().as_float());
                                  uint32_t bits;
                                  std::memcpy(&bits, &f, 4);
                                  return std::to_string(bits >> 16) + "u";
                                }),
                    }) +
      cstyle_base_rewrite();
  return pm;
}
}  // namespace

OpenCLRenderer::OpenCLRenderer(Target t) : CStyleLanguage(std::move(t)) {
  kernel_typedef = "__kernel void";
  buffer_prefix = "__global ";
  smem_align = "__attribute__ ((aligned (16))) ";
  smem_prefix = "__local ";
  barrier = "barrier(CLK_LOCAL_MEM_FENCE);";
  float4 = "(float4)";
  code_for_workitem = {{'g', [](const std::string& x) { return "get_group_id(" + x + ")"; }},
                       {'l', [](const std::string& x) { return "get_local_id(" + x + ")"; }},
                       {'i', [](const std::string& x) { return "get_global_id(" + x + ")"; }}};
  type_map = {{dtypes::int8, "char"},     {dtypes::uint8, "uchar"},  {dtypes::uint32, "uint"},
              {dtypes::uint16, "ushort"}, {dtypes::uint64, "ulong"}, {dtypes::bfloat16, "ushort"}};
  static const PatternMatcher extra = create_non_native_float_pats({dtypes::bfloat16}) + pm_manual_bf16_cast();
  extra_matcher = &extra;
  string_rewrite = &opencl_rewrite();
}

std::string OpenCLRenderer::render_kernel(const std::string& function_name, const std::vector<std::string>& kernel,
                                          const std::vector<BufArg>& bufs, const std::vector<UOp>& uops,
                                          const std::optional<std::vector<std::string>>& prefix) const {
  bool half = false;
  for (const UOp& u : uops)
    if (u.dtype() == dtypes::float16) half = true;
  if (!half) return CStyleLanguage::render_kernel(function_name, kernel, bufs, uops, prefix);
  std::vector<std::string> pre{"#pragma OPENCL EXTENSION cl_khr_fp16 : enable"};
  if (prefix) pre.insert(pre.end(), prefix->begin(), prefix->end());
  return CStyleLanguage::render_kernel(function_name, kernel, bufs, uops, pre);
}

std::vector<DType> OpenCLRenderer::supported_dtypes() const {
  std::vector<DType> r;
  for (DType d : CStyleLanguage::supported_dtypes())
    if ((d != dtypes::float16 || has_extension(target.arch, "cl_khr_fp16")) &&
        (d != dtypes::float64 || has_extension(target.arch, "cl_khr_fp64")) && !contains(dtypes::fp8s, d))
      r.push_back(d);
  return r;
}

}  // namespace tg
