// Port of the core of tinygrad/uop/ops.py: the UOp, hash-consed and intrusively refcounted.
// A UOp (op, dtype, src, arg, tag) is created once; creating the same five again returns the same node, and the
// node goes away with its last reference. Nodes are immutable, so derived properties (vmin/vmax, shape, ranges)
// are computed once and cached on the node.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lib/dtype.h"
#include "lib/uop/arg.h"
#include "lib/uop/ops.h"

namespace tg {

class UOp;
template <typename R>
class BasicPatternMatcher;
using PatternMatcher = BasicPatternMatcher<UOp>;
namespace detail {
struct UOpCache;
struct UOpNode {
  std::atomic<uint32_t> rc;
  Ops op;
  uint32_t nsrc;
  DType dtype;
  size_t hash;
  Arg arg, tag;
  OpSet src_ops;                      // ops of the srcs, for the matcher's early reject
  std::atomic<UOpCache*> cache{nullptr};
  std::atomic<uint64_t> trace_id{0};  // (trace generation << 32) | id, assigned by a recorder
  UOpNode* srcs[];                    // nsrc entries, each holding a reference
};
void release_node(UOpNode* n);
}  // namespace detail

// python int|UOp (a shape dimension or symbolic value)
class sint;
using Shape = std::vector<sint>;

class UOp {
 public:
  UOp() = default;
  UOp(const UOp& o) : n_(o.n_) { inc(); }
  UOp(UOp&& o) noexcept : n_(o.n_) { o.n_ = nullptr; }
  UOp& operator=(const UOp& o) {
    if (o.n_) o.n_->rc.fetch_add(1, std::memory_order_relaxed);
    dec();
    n_ = o.n_;
    return *this;
  }
  UOp& operator=(UOp&& o) noexcept {
    if (this != &o) {
      dec();
      n_ = o.n_;
      o.n_ = nullptr;
    }
    return *this;
  }
  ~UOp() { dec(); }

  // UOp(op, dtype, src, arg, tag): hash-consed construction. An empty dtype is derived (dtype_from_uop).
  UOp(Ops op, DType dtype = DType(), std::span<const UOp> src = {}, Arg arg = {}, Arg tag = {});
  UOp(Ops op, DType dtype, std::initializer_list<UOp> src, Arg arg = {}, Arg tag = {})
      : UOp(op, dtype, std::span<const UOp>(src.begin(), src.size()), std::move(arg), std::move(tag)) {}
  UOp(Ops op, DType dtype, const std::vector<UOp>& src, Arg arg = {}, Arg tag = {})
      : UOp(op, dtype, std::span<const UOp>(src), std::move(arg), std::move(tag)) {}

  // ***** identity *****
  explicit operator bool() const { return n_ != nullptr; }
  bool operator==(const UOp& o) const { return n_ == o.n_; }  // identity == structural equality (interning)
  bool is(const UOp& o) const { return n_ == o.n_; }
  detail::UOpNode* node() const { return n_; }
  static UOp from_node(detail::UOpNode* n) {  // takes a new reference
    UOp u;
    u.n_ = n;
    u.inc();
    return u;
  }
  size_t ptr_hash() const { return std::hash<const void*>()(n_); }

  // ***** fields *****
  Ops op() const { return n_->op; }
  DType dtype() const { return n_->dtype; }
  std::span<const UOp> src() const { return {reinterpret_cast<const UOp*>(n_->srcs), n_->nsrc}; }
  const UOp& src(size_t i) const { return reinterpret_cast<const UOp*>(n_->srcs)[i]; }
  size_t nsrc() const { return n_->nsrc; }
  const Arg& arg() const { return n_->arg; }
  const Arg& tag() const { return n_->tag; }
  OpSet src_ops() const { return n_->src_ops; }
  size_t hash() const { return n_->hash; }

  UOp replace(std::optional<Ops> op = {}, std::optional<DType> dtype = {}, std::optional<std::vector<UOp>> src = {},
              std::optional<Arg> arg = {}, std::optional<Arg> tag = {}) const;
  UOp with_src(std::vector<UOp> src) const { return replace({}, {}, std::move(src)); }
  UOp with_arg(Arg arg) const { return replace({}, {}, {}, std::move(arg)); }
  UOp rtag(Arg tag = Arg(true)) const { return replace({}, {}, {}, {}, std::move(tag)); }
  UOp f(Ops op, Arg arg = {}) const;                    // UOp(op, self.dtype, (self,), arg)
  UOp f(Ops op, DType dtype, Arg arg = {}) const;

  const PyConst val() const;  // CONST value
  bool is_invalid() const { return op() == Ops::CONST && arg().is_invalid(); }

  // ***** graph *****
  // srcs left to right, then the node; a gated-out node is excluded with its subtree
  std::vector<UOp> toposort(const std::function<bool(const UOp&)>& gate = nullptr, bool enter_calls = true) const;
  std::vector<UOp> backward_slice() const;  // toposort without self
  bool in_backward_slice_with_self(const UOp& x) const;
  bool op_in_backward_slice_with_self(OpSet ops) const;
  std::vector<UOp> split_uop(Ops sep) const;
  // lexicographic compare of (op.value, arg, dtype, *src.tuplize) like python tuples: -1/0/1
  static int tuplize_cmp(const UOp& a, const UOp& b);

  // ***** shape / ranges *****
  const std::optional<Shape>& shape_opt() const;  // _shape
  const Shape& shape() const;                     // throws if no shape
  std::vector<UOp> ranges() const;                // insertion-ordered
  UOp base() const;
  Shape as_shape() const;
  Arg marg_arg() const;  // PERMUTE/FLIP arg (tuple)

  // ***** evaluation *****
  PyConst vmin() const;
  PyConst vmax() const;
  std::pair<PyConst, PyConst> min_max() const;
  UOp simplify(bool tracked = false) const;
  // int/float/bool value when constant after simplify, else the simplified UOp
  sint ssimplify() const;
  bool as_bool() const;  // __bool__: simplify and require vmin == vmax
  pyint as_int() const;  // __int__
  std::string render(bool simplify = true) const;
  UOp substitute(const std::vector<std::pair<UOp, UOp>>& dvars, const char* name = nullptr, bool walk = false,
                 bool enter_calls = false, const PatternMatcher* extra_pm = nullptr) const;
  bool overflows(DType d) const;

  // ***** symbolic helpers *****
  PyConst const_factor() const;
  UOp divides(pyint v) const;  // null when unknown
  std::pair<UOp, PyConst> pop_const(Ops op = Ops::ADD) const;
  static UOp gcd(std::span<const UOp> uops);
  UOp divide_exact(const UOp& v) const;

  // ***** variables / params *****
  static UOp variable(const std::string& name, PyConst min_val, PyConst max_val, DType dtype = DType(),
                      int64_t multiple_of = 1, bool param = false);
  bool is_variable() const;
  bool is_bound_var() const;
  std::string expr() const;
  UOp bind(pyint val) const;
  std::pair<UOp, pyint> unbind() const;
  const ParamArg* param_arg() const { return arg().as<ParamArg>(); }
  // the Variables (and DEVICE ranges as _device_num params) this graph depends on, sorted by name
  std::vector<UOp> variables() const;
  // evaluate with python semantics (no width truncation) given variable values by name
  PyConst sym_infer(const std::unordered_map<std::string, pyint>& var_vals) const;

  // ***** builders (the UOp side of the mixins) *****
  static UOp const_(PyConst b, DType dtype = DType());
  static UOp invalid() { return const_(PyConst::invalid()); }
  UOp const_like(PyConst b, DType dtype = DType()) const;
  static UOp range(sint end, int64_t axis_id, AxisType axis_type = AxisType::WEAK, DType dtype = DType());
  static UOp special(sint end, const std::string& name, DType dtype = DType());
  static UOp sink(std::span<const UOp> srcs, Arg arg = {});
  static UOp sink(std::initializer_list<UOp> srcs, Arg arg = {}) { return sink(std::span<const UOp>(srcs.begin(), srcs.size()), arg); }
  static UOp group(std::span<const UOp> srcs);
  static UOp stack(std::span<const UOp> srcs);
  UOp broadcast(int64_t count) const;
  UOp index(std::span<const UOp> idx) const;
  UOp index(const UOp& i) const { return index(std::span<const UOp>(&i, 1)); }
  UOp load(std::span<const UOp> srcs = {}) const;
  UOp store(const UOp& val) const;
  UOp end(std::span<const UOp> srcs) const;
  UOp after(std::span<const UOp> srcs) const;
  UOp reduce(std::span<const UOp> rngs, Ops op) const;
  UOp valid(const UOp& cond) const;  // cond.where(self, Invalid)
  UOp get_idx() const;
  UOp get_valid() const;
  UOp cast(DType d) const;
  UOp bitcast(DType d) const;
  UOp alu(Ops op) const;
  UOp alu(Ops op, const UOp& a) const;
  UOp alu(Ops op, const UOp& a, const UOp& b) const;
  std::pair<UOp, UOp> broadcasted(const UOp& y, bool reverse = false) const;
  UOp ufix(PyConst c) const { return const_(c); }
  UOp binop(Ops op, const UOp& x, bool reverse = false) const;
  UOp add(const UOp& x, bool reverse = false) const { return binop(Ops::ADD, x, reverse); }
  UOp mul(const UOp& x, bool reverse = false) const { return binop(Ops::MUL, x, reverse); }
  UOp sub(const UOp& x, bool reverse = false) const;
  UOp neg() const;
  UOp div(const UOp& x, bool reverse = false) const;                 // python /
  UOp floordiv(const UOp& x, bool reverse = false) const;            // python //
  UOp mod(const UOp& x, bool reverse = false) const;                 // python %
  UOp ne(const UOp& x) const { return binop(Ops::CMPNE, x); }
  UOp eq(const UOp& x) const { return ne(x).logical_not(); }
  UOp lt(const UOp& x) const { return binop(Ops::CMPLT, x); }
  UOp gt(const UOp& x) const { return binop(Ops::CMPLT, x, true); }
  UOp logical_not() const { return cast(dtypes::bool_).ne(const_(true)); }
  UOp bitwise_not() const;
  UOp maximum(const UOp& x) const { return binop(Ops::MAX, x); }
  UOp minimum(const UOp& x) const;
  UOp where(const UOp& x, const UOp& y) const;
  UOp reciprocal() const { return alu(Ops::RECIPROCAL); }
  UOp trunc() const { return alu(Ops::TRUNC); }
  UOp sqrt() const { return alu(Ops::SQRT); }
  UOp exp2() const { return alu(Ops::EXP2); }
  UOp log2() const { return alu(Ops::LOG2); }
  UOp sin() const { return alu(Ops::SIN); }
  UOp pow(const UOp& x, bool reverse = false) const;
  UOp usum(std::span<const UOp> more) const;
  UOp uprod(std::span<const UOp> more) const;
  static UOp usum_of(std::span<const UOp> all);   // functools.reduce over a non-empty list
  static UOp uprod_of(std::span<const UOp> all);
  UOp mop(Ops op, const std::vector<sint>& shape) const;  // RESHAPE/EXPAND with a shape
  UOp permute(const std::vector<int64_t>& order) const;
  UOp reshape(const Shape& shape) const { return mop(Ops::RESHAPE, shape); }
  UOp expand_prepend(const Shape& shape) const { return mop(Ops::EXPAND, shape); }

  // pretty_print (the reference's repr)
  std::string repr() const;

 private:
  void inc() const {
    if (n_) n_->rc.fetch_add(1, std::memory_order_relaxed);
  }
  void dec() {
    if (n_ && n_->rc.fetch_sub(1, std::memory_order_acq_rel) == 1) detail::release_node(n_);
    n_ = nullptr;
  }
  detail::UOpNode* n_ = nullptr;
};

class sint {
 public:
  sint() : i_(0) {}
  sint(int v) : i_(v) {}
  sint(long v) : i_(v) {}
  sint(long long v) : i_(v) {}
  sint(pyint v) : i_(v) {}
  sint(UOp u);
  bool is_int() const { return !u_; }
  pyint i() const { return i_; }
  const UOp& u() const { return u_; }
  UOp to_uop(DType dtype = DType()) const;  // sint_to_uop
  bool same(const sint& o) const { return is_int() ? (o.is_int() && i_ == o.i_) : u_ == o.u_; }
  std::string str() const;  // python str / srender
  pyint max_int() const;    // vmax for symbolic
 private:
  pyint i_ = 0;
  UOp u_;
};

struct UOpHash {
  size_t operator()(const UOp& u) const { return u.ptr_hash(); }
};
template <typename V>
using UOpMap = std::unordered_map<UOp, V, UOpHash>;
using UOpSet = std::unordered_set<UOp, UOpHash>;

// operators: python semantics of the mixins (promotion, weak consts, sub = a + -b, ...). `==` stays identity.
UOp operator+(const UOp& a, const UOp& b);
UOp operator-(const UOp& a, const UOp& b);
UOp operator*(const UOp& a, const UOp& b);
UOp operator/(const UOp& a, const UOp& b);
UOp operator%(const UOp& a, const UOp& b);
UOp operator&(const UOp& a, const UOp& b);
UOp operator|(const UOp& a, const UOp& b);
UOp operator^(const UOp& a, const UOp& b);
UOp operator<<(const UOp& a, const UOp& b);
UOp operator>>(const UOp& a, const UOp& b);
UOp operator<(const UOp& a, const UOp& b);
UOp operator>(const UOp& a, const UOp& b);
UOp operator<=(const UOp& a, const UOp& b);
UOp operator>=(const UOp& a, const UOp& b);
UOp operator-(const UOp& a);
UOp operator~(const UOp& a);
#define TG_UOP_CONST_OPS(OP)                                                              \
  inline UOp operator OP(const UOp& a, PyConst b) { return a OP UOp::const_(b); }      \
  inline UOp operator OP(PyConst a, const UOp& b) { return UOp::const_(a) OP b; }
TG_UOP_CONST_OPS(+)
TG_UOP_CONST_OPS(*)
TG_UOP_CONST_OPS(/)
TG_UOP_CONST_OPS(%)
TG_UOP_CONST_OPS(&)
TG_UOP_CONST_OPS(|)
TG_UOP_CONST_OPS(^)
TG_UOP_CONST_OPS(<<)
TG_UOP_CONST_OPS(>>)
TG_UOP_CONST_OPS(<)
TG_UOP_CONST_OPS(>)
TG_UOP_CONST_OPS(<=)
TG_UOP_CONST_OPS(>=)
#undef TG_UOP_CONST_OPS
// python's reflected ops keep the UOp as self: 1 - x == x.sub(1, reverse=True)
inline UOp operator-(const UOp& a, PyConst b) { return a.sub(UOp::const_(b)); }
inline UOp operator-(PyConst a, const UOp& b) { return b.sub(UOp::const_(a), true); }

// helpers
UOp sint_to_uop(const sint& x, DType dtype = DType());
// shapes equal element-wise (ints by value, symbolic dims by identity)
bool shape_eq(const Shape& a, const Shape& b);
DType dtype_from_uop(Ops op, std::span<const UOp> src, const Arg& arg);  // empty DType when undetermined
std::string range_str(const UOp& u);
PyConst identity_element(Ops op, DType dt);
bool resolve(const UOp& x, bool default_value = true);
std::string uop_repr(const UOp& u);

// The intern table, exposed for tests and statistics.
size_t live_uop_count();

// Side-effect free python scalar ALU (python_alu + truncation), used by const folding.
PyConst exec_alu(Ops op, DType dtype, std::span<const PyConst> operands, bool truncate_output = true);

}  // namespace tg

template <>
struct std::hash<tg::UOp> {
  size_t operator()(const tg::UOp& u) const { return u.ptr_hash(); }
};
