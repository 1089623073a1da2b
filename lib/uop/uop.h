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
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lib/dtype.h"
#include "lib/mixin/rand.h"
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
  std::atomic<uint8_t> flags{0};  // kScalarShape: the shape is () (kept here: no cache is made for it)
  uint32_t nsrc;
  DType dtype;
  size_t hash;
  uintptr_t next;  // the intern table's chain: the next node of this node's bucket (a tagged word, see node_store.cpp)
  Arg arg, tag;
  OpSet src_ops;                      // ops of the srcs, for the matcher's early reject
  std::atomic<UOpCache*> cache{nullptr};
  std::atomic<uint64_t> trace_id{0};  // (trace generation << 32) | id, assigned by a recorder
  // the ops of this node and of its whole backward slice: a graph_rewrite skips a subgraph whose ops no rule's root
  // can have (see rewrite.cpp)
  OpSet slice_ops;
  // (rewrite serial << 24) | slot: where the graph_rewrite that claimed this node keeps its state for it (next to
  // the srcs the driver reads anyway, so finding that state costs no hash probe; see rewrite.cpp)
  std::atomic<uint64_t> rw_slot{0};
  // a Bloom filter of this node and its srcs, a bit each (below_bit): the matcher's shared-src prefilter
  uint64_t below1;
  UOpNode* srcs[];                    // nsrc entries, each holding a reference
};
constexpr uint8_t kScalarShape = 1;
// never released (the small constants' table keeps it): no count is kept, so threads that share the node never write
// its line (without a shared cache, every such write moves the line between the cores)
constexpr uint8_t kImmortal = 2;
// set at birth: an Invalid CONST is in the node's backward slice (itself included); a rule whose pattern needs one
// (PatternMatcher's prefilter) is not tried on the node without it
constexpr uint8_t kSliceInvalid = 4;
// in the private intern table of the thread that made it (a PrivateNodes scope, declared below): no other thread
// sees it, so its counts, claims and bucket need no atomics and no other core ever writes its line
constexpr uint8_t kPrivate = 8;
// in no intern table: a private node handed to the other threads (adopt_private); nothing interns to it again
constexpr uint8_t kOrphan = 16;
inline bool counted(const UOpNode* n) { return !(n->flags.load(std::memory_order_relaxed) & kImmortal); }
// a node's bit in the below1 Bloom filters: the top 6 bits of its structural hash (mixed by fmix)
inline uint64_t below_bit(const UOpNode* n) { return uint64_t(1) << (n->hash >> 58); }
void release_node(UOpNode* n);

// Reference counts, the intern table and the rewrite driver's claims on nodes skip atomic read-modify-writes (a
// locked instruction each: ~11% of codegen's time on one thread) while one thread alone uses UOps. The first thread
// to use a UOp owns that mode; any other thread that uses one makes every thread use atomics from then on, after a
// handshake with the owner, and so does the engine's worker pool while it works (node_store.cpp explains it).
// 0: none yet, 1: the owner, 2: another thread, 3: in a PrivateNodes scope (this thread's own nodes only: plain)
inline thread_local constinit uint8_t t_uop_role = 0;
// TG_CHECK_PRIVATE builds: a counted node touched in a PrivateNodes scope must be this thread's (a shared node's
// count written plain there would race with the other threads)
#ifdef TG_CHECK_PRIVATE
void private_violation(const UOpNode* n);  // checks, and aborts on a violation
void private_made(const UOpNode* n);
void private_gone(const UOpNode* n);
#endif
inline void check_private([[maybe_unused]] const UOpNode* n) {
#ifdef TG_CHECK_PRIVATE
  // in a scope: the node is this thread's private one; out of one: no thread's private node
  if (t_uop_role == 3 || (n->flags.load(std::memory_order_relaxed) & kPrivate)) private_violation(n);
#endif
}
extern std::atomic<uint32_t> g_uop_sharers;  // threads other than the owner using UOps now, and worker pool sections
extern std::atomic<uint32_t> g_owner_busy;   // the owner's depth of node operations, published for the handshake
void claim_uop_role();
// one operation on reference counts or the intern table; plain(): the owner alone uses UOps, so the operation's
// read-modify-writes may be plain loads and stores
class NodeOp {
 public:
  inline __attribute__((always_inline)) NodeOp() {
    if (t_uop_role != 1) [[unlikely]] {
      if (t_uop_role == 3) {
        plain_ = true;
        return;
      }
      if (t_uop_role != 0) return;
      claim_uop_role();
      if (t_uop_role != 1) return;
    }
    owner_ = true;
    depth_ = g_owner_busy.load(std::memory_order_relaxed);  // only the owner writes it
    g_owner_busy.store(depth_ + 1, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    plain_ = g_uop_sharers.load(std::memory_order_acquire) == 0;
  }
  inline __attribute__((always_inline)) ~NodeOp() {
    if (!owner_) return;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g_owner_busy.store(depth_, std::memory_order_release);
  }
  NodeOp(const NodeOp&) = delete;
  NodeOp& operator=(const NodeOp&) = delete;
  bool plain() const { return plain_; }

 private:
  bool owner_ = false, plain_ = false;
  uint32_t depth_ = 0;
};
// x + 1 and x - 1, returning the value before
inline uint32_t rc_inc(std::atomic<uint32_t>& x, bool plain) {
  if (plain) {
    uint32_t v = x.load(std::memory_order_relaxed);
    x.store(v + 1, std::memory_order_relaxed);
    return v;
  }
  return x.fetch_add(1, std::memory_order_relaxed);
}
inline uint32_t rc_dec(std::atomic<uint32_t>& x, bool plain) {
  if (plain) {
    uint32_t v = x.load(std::memory_order_relaxed);
    x.store(v - 1, std::memory_order_relaxed);
    return v;
  }
  return x.fetch_sub(1, std::memory_order_acq_rel);
}
}  // namespace detail

class UOp;
namespace detail {
// the untracked simplify() of a node, kept in its cache (out: null = the node itself); false when not computed yet
bool cached_simplify(UOpNode* n, UOp& out);
void set_cached_simplify(UOpNode* n, const UOp& r);
}  // namespace detail

class NodeList;

template <>
struct MixinTypes<UOp> {
  using operand = Operand;
};

// the node handle; its op surface (the builder mixins of tinygrad/mixin) is inherited, shared with Tensor
class UOp : public RandMixin<UOp> {
 public:
  UOp() = default;
  UOp(const UOp& o) : n_(o.n_) { inc(); }
  UOp(UOp&& o) noexcept : n_(o.n_) { o.n_ = nullptr; }
  UOp& operator=(const UOp& o) {
    // read o's node before dec(): o may live inside the node this releases (x = x.src(0))
    detail::UOpNode* n = o.n_;
    if (n && detail::counted(n)) {
      detail::check_private(n);
      detail::NodeOp op;
      detail::rc_inc(n->rc, op.plain());
    }
    dec();
    n_ = n;
    return *this;
  }
  UOp& operator=(UOp&& o) noexcept {
    if (this != &o) {
      detail::UOpNode* n = o.n_;
      o.n_ = nullptr;
      dec();
      n_ = n;
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
  OpSet slice_ops() const { return n_->slice_ops; }
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
  // toposort() without a reference per node: views valid while this node lives (it holds its whole slice)
  NodeList toposort_borrowed() const;
  std::vector<UOp> backward_slice() const;  // toposort without self
  // x in toposort(enter_calls=enter_calls)
  bool in_backward_slice_with_self(const UOp& x, bool enter_calls = true) const;
  bool op_in_backward_slice_with_self(OpSet ops) const;
  // whether pred holds for a node of the backward slice or self (a borrowed walk; pred must not run another one)
  bool any_in_backward_slice_with_self(bool (*pred)(const UOp&)) const;
  // the same when pred can hold only for nodes of pred_ops: the walk skips the slices that have none
  bool any_in_backward_slice_with_self(bool (*pred)(const UOp&), OpSet pred_ops) const;
  std::vector<UOp> split_uop(Ops sep) const;
  // lexicographic compare of (op.value, arg, dtype, *src.tuplize) like python tuples: -1/0/1
  static int tuplize_cmp(const UOp& a, const UOp& b);

  // ***** shape / ranges *****
  const std::optional<Shape>& shape_opt() const;  // _shape
  const Shape& shape() const;                     // throws if no shape
  std::vector<UOp> ranges() const;                // insertion-ordered
  const std::vector<UOp>& inner_ranges() const;   // the reference's _ranges: ranges() without the node itself
  // f(x) for each of the reference's ended_ranges (the srcs that end ranges), in order, without building a list
  template <class F>
  void for_each_ended_range(F&& f) const {
    int start = -1;
    switch (op()) {
      case Ops::STAGE:
      case Ops::REDUCE:
      case Ops::END:
      case Ops::CALL:
      case Ops::FUNCTION:
      case Ops::UNSHARD:
        start = 1;
        break;
      case Ops::WMMA:
        start = 3;
        break;
      case Ops::LINEAR:
        start = 0;
        break;
      case Ops::AFTER:
        for (size_t i = 1; i < nsrc(); i++) src(i).for_each_ended_range(f);
        return;
      default:
        return;
    }
    for (size_t i = std::min<size_t>(start, nsrc()); i < nsrc(); i++) f(src(i));
  }
  // the node under the movement ops (and DETACHes): a node of this one's graph, borrowed (valid while this node is;
  // copy it to keep it past that)
  const UOp& base() const;
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

  // ***** uop/ops.py: the UOp's own builders and the hooks the mixins build on (lib/mixin/uop.cpp) *****
  const UOp& _uop() const { return *this; }                // the mixins' graph of self
  static const UOp& _wrap_uop(const UOp& u) { return u; }  // the mixins' Self around a graph
  // the mixins' per-device RNG counter: only Tensor keeps one, so random UOps throw (as in the reference)
  static std::pair<UOp, UOp> next_counter(const std::string& device, pyint num);
  static UOp const_(PyConst b, DType dtype = DType());  // UOp.const (a python scalar)
  static UOp const_(const UOp& b, DType dtype);         // UOp.const of a UOp: a cast
  static UOp invalid() { return const_(PyConst::invalid()); }
  UOp const_like(PyConst b, DType dtype = DType()) const;
  UOp ufix(const Operand& x) const;  // a UOp stays, a python scalar becomes a (weak) CONST
  static UOp range(sint end, int64_t axis_id, AxisType axis_type = AxisType::WEAK, DType dtype = DType());
  static UOp special(sint end, const std::string& name, DType dtype = DType());
  static UOp sink(std::span<const UOp> srcs, Arg arg = {});
  static UOp sink(std::initializer_list<UOp> srcs, Arg arg = {}) {
    return sink(std::span<const UOp>(srcs.begin(), srcs.size()), arg);
  }
  static UOp group(std::span<const UOp> srcs);
  UOp broadcast(int64_t count) const;
  UOp vconst_like(PyConst b) const;  // for use after movement ops have been removed: const(b, dtype) x max_numel
  UOp index(std::span<const UOp> idx) const;
  UOp index(const UOp& i) const { return index(std::span<const UOp>(&i, 1)); }
  UOp load(std::span<const UOp> srcs = {}) const;
  UOp load(std::initializer_list<UOp> srcs) const { return load(std::span<const UOp>(srcs.begin(), srcs.size())); }
  UOp store(const UOp& val) const;
  UOp store(const UOp& val, const UOp& gate) const;  // store(src, gate=gate)
  UOp end(std::span<const UOp> srcs) const;
  UOp after(std::span<const UOp> srcs) const;
  UOp after(const UOp& s) const { return after(std::span<const UOp>(&s, 1)); }
  UOp reduce(std::span<const UOp> rngs, Ops op) const;  // the kernel-graph REDUCE(x, *ranges)
  UOp valid(const UOp& cond) const;                     // cond.where(self, Invalid)
  UOp get_idx() const;
  UOp get_valid() const;
  UOp alu(Ops op) const;
  UOp alu(Ops op, const UOp& a) const;
  UOp alu(Ops op, const UOp& a, const UOp& b) const;
  // _mop: RESHAPE/EXPAND take a shape, PAD/SHRINK (offset, size) pairs, PERMUTE/FLIP a tuple arg; no checks
  UOp mop(Ops op, const Shape& shape) const;
  UOp mop(Ops op, const std::vector<std::pair<sint, sint>>& arg) const;
  UOp mop(Ops op, Arg arg) const;
  UOp rop(Ops op, std::vector<int64_t> axis) const;  // _rop: REDUCE over axes (permuted to the front)
  // PARAM/BUFFER storage. `device` is None, a device name or a tuple of names (python's str|tuple)
  static UOp param(int64_t slot, DType dtype, const std::optional<Shape>& shape = std::nullopt, Arg device = {});
  static UOp new_buffer(const Arg& device, pyint size, DType dtype, std::optional<int64_t> num = std::nullopt);
  // a GLOBAL PARAM, or a LOCAL/REG BUFFER, of prod(shape) elements reshaped to shape
  static UOp placeholder(const Shape& shape, DType dtype, int64_t slot, AddrSpace addrspace = AddrSpace::GLOBAL,
                         Arg device = {});
  bool has_buffer_identity(bool after_ok = false) const;
  Arg device() const;                      // None (a null Arg), a device name, or a tuple of names
  std::optional<AddrSpace> addrspace() const;




  // pretty_print (the reference's repr)
  std::string repr() const;

 private:
  void inc() const {
    if (n_ && detail::counted(n_)) {
      detail::check_private(n_);
      detail::NodeOp op;
      detail::rc_inc(n_->rc, op.plain());
    }
  }
  void dec() {
    if (n_ && detail::counted(n_)) {
      uint32_t before;
      detail::check_private(n_);
      {
        detail::NodeOp op;
        before = detail::rc_dec(n_->rc, op.plain());
      }
      if (before == 1) detail::release_node(n_);
    }
    n_ = nullptr;
  }
  detail::UOpNode* n_ = nullptr;
};

// a UOp is its node pointer (the mixin bases are empty): spans of nodes are read as spans of UOps
static_assert(sizeof(UOp) == sizeof(void*) && std::is_standard_layout_v<UOp>);

// nodes borrowed from a graph that keeps them alive (toposort_borrowed), seen as UOps
class NodeList {
 public:
  std::span<const UOp> view() const { return {reinterpret_cast<const UOp*>(nodes.data()), nodes.size()}; }
  const UOp* begin() const { return view().data(); }
  const UOp* end() const { return view().data() + nodes.size(); }
  size_t size() const { return nodes.size(); }
  const UOp& operator[](size_t i) const { return view()[i]; }
  std::vector<detail::UOpNode*> nodes;
};

// While a ToposortMemo lives on a thread, toposort_borrowed keeps its last answer in it (the graph's root held by the
// memo): asked again of the same node, it answers from there instead of walking. to_program's last steps (parameter
// numbering, ProgramInfo, the linearizer) walk the same final graph. Memos nest: the innermost answers.
class ToposortMemo {
 public:
  ToposortMemo();
  ~ToposortMemo();
  ToposortMemo(const ToposortMemo&) = delete;
  ToposortMemo& operator=(const ToposortMemo&) = delete;

 private:
  friend class UOp;
  ToposortMemo* outer_;
  UOp root_;
  NodeList list_;
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

// a UOp or a python scalar (int, float, bool): the `Self | ConstType` operand of the elementwise mixin
class Operand {
 public:
  Operand(const UOp& u) : u_(u) {}
  Operand(UOp&& u) : u_(std::move(u)) {}
  Operand(const sint& s) : c_(s.is_int() ? PyConst(s.i()) : PyConst()), u_(s.is_int() ? UOp() : s.u()) {}
  Operand(PyConst c) : c_(c) {}
  Operand(int v) : c_(v) {}
  Operand(long v) : c_(v) {}
  Operand(long long v) : c_(v) {}
  Operand(unsigned long v) : c_(v) {}
  Operand(pyint v) : c_(v) {}
  Operand(double v) : c_(v) {}
  Operand(bool v) : c_(v) {}
  bool is_uop() const { return (bool)u_; }
  const UOp& uop() const { return u_; }
  const PyConst& value() const { return c_; }

 private:
  PyConst c_;
  UOp u_;
};

// a shape whose entries may be nullopt (python None keeps the current size)
class OptShape : public std::vector<std::optional<sint>> {
 public:
  using std::vector<std::optional<sint>>::vector;
  OptShape(const Shape& s) {
    for (const sint& x : s) push_back(x);
  }
};

// an axis of pad/shrink args: (a, b) or nullopt (python None)
struct OptPair {
  OptPair(std::nullopt_t) {}
  OptPair(sint a, sint b) : none(false), first(std::move(a)), second(std::move(b)) {}
  bool none = true;
  sint first, second;
};

// one python index of __getitem__: an int (or sint), slice(start, stop, step), None, Ellipsis or a UOp index tensor
struct Index {
  enum class Kind : uint8_t { Int, Slice, None, Ellipsis, Tensor };
  Index(int v) : kind(Kind::Int), i(v) {}
  Index(long v) : kind(Kind::Int), i(v) {}
  Index(long long v) : kind(Kind::Int), i((pyint)v) {}
  Index(const sint& v) : kind(v.is_int() ? Kind::Int : Kind::Tensor), i(v), tensor(v.is_int() ? UOp() : v.u()) {}
  Index(std::nullopt_t) : kind(Kind::None) {}
  Index(const UOp& t) : kind(Kind::Tensor), tensor(t) {}
  static Index slice(std::optional<sint> start = std::nullopt, std::optional<sint> stop = std::nullopt,
                     std::optional<sint> step = std::nullopt) {
    Index r(std::nullopt);
    r.kind = Kind::Slice;
    r.start = std::move(start), r.stop = std::move(stop), r.step = std::move(step);
    return r;
  }
  static Index ellipsis() {
    Index r(std::nullopt);
    r.kind = Kind::Ellipsis;
    return r;
  }
  Kind kind;
  sint i;
  std::optional<sint> start, stop, step;
  UOp tensor;
};
inline const Index Ellipsis = Index::ellipsis();

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
// ops.broadcast_axes: the axes of out_shape that broadcasting src_shape adds or expands
std::vector<int64_t> broadcast_axes(const Shape& src_shape, const Shape& out_shape);
DType dtype_from_uop(Ops op, std::span<const UOp> src, const Arg& arg);  // empty DType when undetermined
std::string range_str(const UOp& u);
PyConst identity_element(Ops op, DType dt);
bool resolve(const UOp& x, bool default_value = true);
std::string uop_repr(const UOp& u);

// The intern table, exposed for tests and statistics: the nodes alive, without the small constants kept for good
// (detail::small_int_const).
size_t live_uop_count();
namespace detail {
// CONST(v) of dtype weakint or int32 for -32 <= v < 1024, from a table that keeps each one made; null otherwise
UOp small_int_const(DType dtype, pyint v);
}  // namespace detail

// Private nodes: work on one thread that shares no node with the others (parallel codegen). While a PrivateNodes
// scope is alive, the thread interns every node it makes in its own table (and its own small constants), with plain
// counts: the other core never writes these nodes' lines, nor the table's. Inside the scope the thread must touch no
// node made outside it: it copies its input in (import_private) and hands its result out (adopt_private). Scopes do
// not nest; the thread's table lives as long as the thread.
class PrivateNodes {
 public:
  PrivateNodes();
  ~PrivateNodes();
  PrivateNodes(const PrivateNodes&) = delete;
  PrivateNodes& operator=(const PrivateNodes&) = delete;

 private:
  uint8_t saved_role_;
};
// whether this thread is in a PrivateNodes scope
inline bool in_private_nodes() { return detail::t_uop_role == 3; }
// a cache that keeps nodes across calls (functools.cache) keeps this thread's private nodes apart, in a per-thread
// map that clear() empties: adopt_private calls every registered clear() before it hands nodes out, and so does the
// scope's end
void register_private_cache(void (*clear)());
// in a PrivateNodes scope: a private copy of root's graph (made outside the scope, kept alive by the caller, and only
// read here)
UOp import_private(const UOp& root);
// in a PrivateNodes scope: root's graph made safe to hand to the other threads once the scope ends. Its private nodes
// (and the UOps in their args) leave the table in place as orphans, nodes no interning finds again, their caches
// dropped; private small constants are replaced by the shared ones. Nothing else of the thread may hold them (the
// scope's per-thread caches are cleared first).
UOp adopt_private(UOp root);

// Side-effect free python scalar ALU (python_alu + truncation), used by const folding.
PyConst exec_alu(Ops op, DType dtype, std::span<const PyConst> operands, bool truncate_output = true);

}  // namespace tg

template <>
struct std::hash<tg::UOp> {
  size_t operator()(const tg::UOp& u) const { return u.ptr_hash(); }
};
