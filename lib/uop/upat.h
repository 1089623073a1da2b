// Port of UPat / PatternMatcher (tinygrad/uop/ops.py, semantics of uop/upat.py).
//
// A rule is a pattern plus a lambda taking the bindings by parameter name (and `ctx`), written with TG_RULE so the
// rule knows where it was written and its full source text:
//
//   const PatternMatcher pm("example", {
//     TG_RULE(UPat::var("x") + 0, [](const UOp& x) { return x; }),
//     TG_RULE(UPat(Ops::CONST).named("c"), [](Ctx& ctx, const UOp& c) { ... }),
//   });
//
// Matching follows the reference exactly: op sets, dtype sets, arg (python ==), tag, src tuples vs permutation lists
// vs a repeated src, allow_any_len, names bound by identity across the whole pattern, the rule called for each
// complete binding until it returns something that is not None and not the node itself.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "lib/helpers.h"
#include "lib/uop/uop.h"

namespace tg {

struct UPatData;

class UPat {
 public:
  UPat();           // matches any node
  UPat(Ops op);     // NOLINT: UPat(Ops::ADD)
  UPat(OpSet ops);  // NOLINT: UPat(GroupOp::ALU)
  explicit UPat(std::shared_ptr<const UPatData> d) : d_(std::move(d)) {}

  // builders: each returns a modified copy (UPat(op, dtype=..., src=..., arg=..., name=..., allow_any_len=...))
  UPat dtype(DType d) const;
  UPat dtype(const DTypes& ds) const;
  UPat named(const std::string& name) const;
  UPat arg(Arg a) const;
  UPat tag(Arg t) const;               // match_tag: a single tag (tuple: any of)
  UPat any_len() const;                // allow_any_len=True
  UPat early_reject(OpSet ops) const;  // custom_early_reject
  template <typename... P>
  UPat src(const P&... s) const {  // src=(a, b): exactly this order
    return src_tuple({UPat(s)...});
  }
  template <typename... P>
  UPat perm(const P&... s) const {  // src=[a, b]: every permutation
    return src_list({UPat(s)...});
  }
  UPat src_all(const UPat& s) const;  // src=UPat: every src matches s
  UPat src_tuple(std::vector<UPat> s) const;
  UPat src_list(std::vector<UPat> s) const;

  static UPat var(const std::string& name = "", const DTypes& dtypes = {});
  static UPat var(const std::string& name, DType dt) { return var(name, DTypes{dt}); }
  static UPat cvar(const std::string& name = "", const DTypes& dtypes = {}, Arg arg = {});
  static UPat cvar(const std::string& name, DType dt, Arg arg = {}) { return cvar(name, DTypes{dt}, std::move(arg)); }
  static UPat const_(PyConst b, const DTypes& dtypes = {});
  static UPat const_(PyConst b, DType dt) { return const_(b, DTypes{dt}); }
  template <typename... P>
  static UPat any(const P&... alts) {
    return any_of({UPat(alts)...});
  }
  static UPat any_of(std::vector<UPat> alts);
  UPat or_casted(const std::string& name = "") const;
  UPat or_after(const std::string& name = "") const;

  // sugar copied from UOp (UPat.f/index/load/store/cast/...)
  UPat f(Ops op) const;
  UPat f(Ops op, Arg arg) const;
  template <typename... P>
  UPat index(const P&... s) const {
    return UPat(Ops::INDEX).src_tuple({*this, UPat(s)...});
  }
  template <typename... P>
  UPat load(const P&... s) const {
    return UPat(Ops::LOAD).src_tuple({*this, UPat(s)...});
  }
  template <typename... P>
  UPat store(const P&... s) const {
    return UPat(Ops::STORE).src_tuple({*this, UPat(s)...});
  }
  template <typename... P>
  UPat after(const P&... s) const {
    return UPat(Ops::AFTER).dtype_of(*this).src_tuple({*this, UPat(s)...});
  }
  template <typename... P>
  UPat end(const P&... s) const {
    return UPat(Ops::END).src_tuple({*this, UPat(s)...});
  }
  template <typename... P>
  static UPat sink(const P&... s) {
    return UPat(Ops::SINK).src_tuple({UPat(s)...});
  }
  UPat cast(std::optional<DType> dt = {}) const;
  UPat cast(const DTypes& dts) const;
  UPat bitcast(std::optional<DType> dt = {}) const;
  UPat reduce(Ops op) const;  // arg=(op, 0)
  UPat reduce_any() const;    // any arg
  UPat broadcast() const;     // STACK with every src == self

  // the mixin operators on patterns (ElementwiseMixin over UPat.alu)
  UPat alu(Ops op) const;
  UPat alu(Ops op, const UPat& a) const;
  UPat alu(Ops op, const UPat& a, const UPat& b) const;
  UPat binop(Ops op, const UPat& x, bool reverse = false) const;
  UPat ne(const UPat& x) const { return binop(Ops::CMPNE, x); }
  UPat eq(const UPat& x) const { return ne(x).logical_not(); }
  UPat logical_not() const { return cast(dtypes::bool_).ne(UPat::cvar("", DTypes{}, Arg(true))); }
  UPat maximum(const UPat& x) const { return binop(Ops::MAX, x); }
  UPat where(const UPat& a, const UPat& b) const { return alu(Ops::WHERE, a, b); }
  UPat reciprocal() const { return alu(Ops::RECIPROCAL); }
  UPat trunc() const { return alu(Ops::TRUNC); }
  UPat floordiv(const UPat& x) const { return binop(Ops::FLOORDIV, x); }
  UPat mod(const UPat& x) const { return binop(Ops::FLOORMOD, x); }
  UPat neg() const;
  UPat sub(const UPat& x, bool reverse = false) const;
  UPat div(const UPat& x, bool reverse = false) const;
  DType first_dtype() const;  // UPat.dtype: first match dtype or void

  // scalars in patterns are UPat.cvar(arg=value)
  UPat(PyConst c);                      // NOLINT
  UPat(int c) : UPat(PyConst(c)) {}     // NOLINT
  UPat(double c) : UPat(PyConst(c)) {}  // NOLINT
  UPat(bool c) : UPat(PyConst(c)) {}    // NOLINT

  const UPatData* data() const { return d_.get(); }
  std::string repr() const;
  // a canonical structural description (sorted op and dtype sets, exact arg encoding), compared against the
  // reference's patterns by tests/parity/test_patterns.cpp
  std::string canon() const;

 private:
  UPat dtype_of(const UPat& other) const;
  std::shared_ptr<const UPatData> d_;
};

UPat operator+(const UPat& a, const UPat& b);
UPat operator-(const UPat& a, const UPat& b);
UPat operator*(const UPat& a, const UPat& b);
UPat operator/(const UPat& a, const UPat& b);
UPat operator%(const UPat& a, const UPat& b);
UPat operator&(const UPat& a, const UPat& b);
UPat operator|(const UPat& a, const UPat& b);
UPat operator^(const UPat& a, const UPat& b);
UPat operator<<(const UPat& a, const UPat& b);
UPat operator>>(const UPat& a, const UPat& b);
UPat operator<(const UPat& a, const UPat& b);
UPat operator>(const UPat& a, const UPat& b);
UPat operator-(const UPat& a);
// reflected scalar ops: 1 - x is x.sub(1, reverse=True)
UPat operator-(int a, const UPat& b);
UPat operator*(int a, const UPat& b);
UPat operator+(int a, const UPat& b);

// ************************* rules *************************

// where a rule was written and its full text
struct RuleSrc {
  const char* file;
  int line;
  const char* text;
};

// Bindings of one match: name id -> node. At most 16 names per pattern.
struct Bindings {
  static constexpr int kMax = 16;
  int n = 0;
  int16_t ids[kMax];
  detail::UOpNode* vals[kMax];
  detail::UOpNode* get(int id) const {
    for (int i = 0; i < n; i++)
      if (ids[i] == id) return vals[i];
    return nullptr;
  }
  // the node bound to id as a borrowed UOp (no reference taken: the matched node keeps it alive); a null UOp if unbound
  const UOp& view(int id) const {
    static detail::UOpNode* const none = nullptr;
    for (int i = 0; i < n; i++)
      if (ids[i] == id) return *reinterpret_cast<const UOp*>(&vals[i]);
    return *reinterpret_cast<const UOp*>(&none);
  }
};
int name_id(const std::string& name);  // global interning of pattern names ("ctx" is -1)

// the ctx passed to graph_rewrite / PatternMatcher::rewrite, type-checked at the rule
struct CtxRef {
  void* p = nullptr;
  const std::type_info* type = nullptr;
  bool writable = false;  // rules may change the context: the order they run in can matter
  CtxRef() = default;
  CtxRef(std::nullptr_t) {}  // NOLINT
  template <typename T>
  CtxRef(T* x) : p((void*)x), type(&typeid(T)), writable(x && !std::is_const_v<T>) {}  // NOLINT
};

struct RuleData;
// invoke: call the rule's function with bindings; returns true when the result is not None (written to out)
using RuleInvoker = bool (*)(const RuleData& r, const Bindings& b, CtxRef ctx, void* out);

// a rule's precondition: the first test of its function, which returns None without it (RuleData::pre)
using RulePre = bool (*)(const UOp&);

struct RuleData {
  UPat pat;
  std::shared_ptr<void> fn;
  RuleInvoker invoke = nullptr;
  std::vector<int> param_ids;  // name ids of the lambda parameters in order, -1 for ctx
  RuleSrc src{};
  std::string file;     // relative to the repository
  std::string text;     // full source text of the rule
  std::string matcher;  // name of the first PatternMatcher that owns it
  uint32_t id = 0;      // global rule id (statistics, traces)
  OpSet early_reject;
  bool needs_invalid = false;     // the pattern matches only nodes with an Invalid CONST in their slice
  // ... only nodes two of whose srcs reach one node, within d1 levels below one and d2 below the other (d1 * 3 + d2;
  // -1: no such need)
  int8_t shared_src_depths = -1;
  Arg needs_src_const;            // ... only nodes with a CONST src of this arg (None: no such need)
  // the function returns None where this is false (its own first test, stated apart): a node failing it is not
  // matched at all when nothing is counted (a counted try matches and calls the function, like the reference)
  RulePre pre = nullptr;
  std::vector<Ops> ops;  // the top pattern's ops
};
using Rule = std::shared_ptr<RuleData>;

// rule registry (every rule ever created, by id)
const RuleData* rule_by_id(uint32_t id);
uint32_t rule_count();

namespace detail {
// set by request_bottom_up_gate() (rewrite.h) inside a rule; the matcher stops trying rules for the node and the
// bottom-up driver treats the node as gated
extern thread_local bool bottom_up_gate;
}  // namespace detail

namespace detail {
std::vector<std::string> parse_lambda_params(const char* text);
bool try_rule(const RuleData& r, const UOp& u, CtxRef ctx, void* out, bool uop_result);
void finish_rule(const Rule& r, const std::vector<std::string>& params);

template <typename T>
struct fn_traits : fn_traits<decltype(&T::operator())> {};
template <typename C, typename R, typename... A>
struct fn_traits<R (C::*)(A...) const> {
  using ret = R;
  using args = std::tuple<A...>;
  static constexpr size_t arity = sizeof...(A);
};
template <typename C, typename R, typename... A>
struct fn_traits<R (C::*)(A...)> : fn_traits<R (C::*)(A...) const> {};

[[noreturn]] void throw_ctx_mismatch(const RuleData& r, const std::type_info& want, CtxRef got);

template <typename A>
static decltype(auto) rule_arg(const RuleData& r, const Bindings& b, CtxRef ctx, int id) {
  using D = std::remove_cv_t<std::remove_reference_t<A>>;
  if constexpr (std::is_same_v<A, const UOp&>) {
    return b.view(id);  // a const reference parameter borrows the bound node
  } else if constexpr (std::is_same_v<D, UOp>) {
    return UOp::from_node(b.get(id));
  } else if constexpr (std::is_pointer_v<D>) {
    using T = std::remove_cv_t<std::remove_pointer_t<D>>;
    if (ctx.p != nullptr && *ctx.type != typeid(T)) throw_ctx_mismatch(r, typeid(T), ctx);
    return static_cast<D>(ctx.p);
  } else {
    if (ctx.p == nullptr || *ctx.type != typeid(D)) throw_ctx_mismatch(r, typeid(D), ctx);
    return *static_cast<D*>(ctx.p);
  }
}

// result conversion into the matcher's result type R; `none` says whether the result counts as None
template <typename R, typename V>
bool store_result(V&& v, void* out) {
  R& o = *static_cast<R*>(out);
  if constexpr (std::is_same_v<std::decay_t<V>, UOp>) {
    if (!v) return false;
    o = std::forward<V>(v);
    return true;
  } else if constexpr (requires { v.has_value(); }) {
    if (!v.has_value()) return false;
    o = R(std::forward<V>(v));
    return true;
  } else {
    o = R(std::forward<V>(v));
    return true;
  }
}

template <typename R, typename F, size_t... I>
bool invoke_rule_impl(const RuleData& r, const Bindings& b, [[maybe_unused]] CtxRef ctx, void* out,
                      std::index_sequence<I...>) {
  const F& f = *static_cast<const F*>(r.fn.get());
  using Args = typename fn_traits<F>::args;
  return store_result<R>(f(rule_arg<std::tuple_element_t<I, Args>>(r, b, ctx, r.param_ids[I])...), out);
}
template <typename R, typename F>
bool invoke_rule(const RuleData& r, const Bindings& b, CtxRef ctx, void* out) {
  return invoke_rule_impl<R, F>(r, b, ctx, out, std::make_index_sequence<fn_traits<F>::arity>{});
}
}  // namespace detail

template <typename F>
struct RuleFn {
  UPat pat;
  F fn;
  RuleSrc src;
  RulePre pre = nullptr;
  // TG_RULE(pat, fn).when(pre): fn returns None on a node where pre is false
  RuleFn when(RulePre p) && {
    pre = p;
    return std::move(*this);
  }
};
template <typename F>
RuleFn<F> make_rule(UPat pat, F fn, RuleSrc src) {
  return RuleFn<F>{std::move(pat), std::move(fn), src};
}

#define TG_RULE(...) ::tg::make_rule(__VA_ARGS__, ::tg::RuleSrc{__FILE__, __LINE__, #__VA_ARGS__})
// the parameter type of rule lambdas, bound by name like the reference's lambda arguments:
//   TG_RULE(UPat::var("x") * 1, [](U x) { return x; })
using U = const UOp&;

// The untyped part of a PatternMatcher: the rules bucketed by op, the tracked and untracked rewrite loops.
class PatternMatcherBase {
 public:
  PatternMatcherBase() = default;
  const std::string& name() const { return name_; }
  const std::vector<Rule>& rules() const { return rules_; }
  // the ops some rule's root can match: a node of another op is never rewritten by this matcher
  OpSet root_ops() const { return root_ops_; }
  size_t size() const { return rules_.size(); }
  // try the rules of u's op bucket in order; true when one returned a result (written to out). A node whose op no
  // rule's root has (often so in a rewrite's walk) returns at once, without a call
  bool rewrite_into(const UOp& u, CtxRef ctx, void* out, bool uop_result) const {
    if (pdict_[(int)u.op()].empty()) return false;
    return try_bucket(u, ctx, out, uop_result);
  }

 protected:
  void add_rules(const std::vector<Rule>& rules);
  std::string name_;
  std::vector<Rule> rules_;
  std::vector<const RuleData*> pdict_[NUM_OPS + 1];
  OpSet root_ops_;
  bool try_bucket(const UOp& u, CtxRef ctx, void* out, bool uop_result) const;
  // this rule set's number (add_rules gives each a new one; a copy shares it with its source, whose rules it has):
  // the key of its rules' per-node-kind lists in the matcher's cache (upat.cpp). 0: not cached
  uint32_t uid_ = 0;
};

template <typename R>
class BasicPatternMatcher : public PatternMatcherBase {
 public:
  struct Entry {
    Rule rule;
    template <typename F>
    Entry(RuleFn<F>&& rf) {  // NOLINT
      auto r = std::make_shared<RuleData>();
      r->pat = std::move(rf.pat);
      r->fn = std::make_shared<F>(std::move(rf.fn));
      r->invoke = &detail::invoke_rule<R, F>;
      r->src = rf.src;
      r->pre = rf.pre;
      detail::finish_rule(r, detail::parse_lambda_params(rf.src.text));
      if (r->param_ids.size() != detail::fn_traits<F>::arity)
        throw Error(std::string("rule at ") + rf.src.file + ":" + std::to_string(rf.src.line) +
                    ": could not read the lambda's parameter names");
      rule = std::move(r);
    }
  };
  BasicPatternMatcher() = default;
  BasicPatternMatcher(std::string name, std::vector<Entry> entries) {
    name_ = std::move(name);
    std::vector<Rule> rs;
    for (auto& e : entries) {
      if (e.rule->matcher.empty()) e.rule->matcher = name_;
      rs.push_back(e.rule);
    }
    add_rules(rs);
  }
  // pm1 + pm2 concatenates the rules (order of addition is priority order)
  BasicPatternMatcher operator+(const BasicPatternMatcher& o) const {
    BasicPatternMatcher r;
    r.name_ = name_ + "+" + o.name_;
    std::vector<Rule> rs = rules_;
    rs.insert(rs.end(), o.rules_.begin(), o.rules_.end());
    r.add_rules(rs);
    return r;
  }
  // None is R{} (a null UOp, an empty optional)
  R rewrite(const UOp& u, CtxRef ctx = {}) const {
    R out{};
    rewrite_into(u, ctx, &out, std::is_same_v<R, UOp>);
    return out;
  }
};
using PatternMatcher = BasicPatternMatcher<UOp>;

}  // namespace tg
