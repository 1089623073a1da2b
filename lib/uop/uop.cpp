// UOp core: dtype derivation, cached properties (vmin/vmax, shape, ranges), symbolic helpers, repr.
#include "lib/uop/uop.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <numeric>
#include <thread>

#include "lib/helpers.h"
#include "lib/mixin/helpers.h"
#include "lib/uop/node_store.h"
#include "lib/uop/nodemap.h"
#include "lib/uop/rewrite.h"

namespace tg {

using detail::cache_of;
using detail::UOpCache;

// ************************* dtype derivation *************************

static DType promo_dtype(std::span<const UOp> src) {
  bool same = true;
  for (const UOp& s : src) same &= s.dtype() == src[0].dtype();
  if (same) return src[0].dtype();
  if (src.size() <= 4) {  // the ALUs' few srcs: no allocation
    DType ds[4];
    for (size_t i = 0; i < src.size(); i++) ds[i] = src[i].dtype();
    return least_upper_dtype(std::span<const DType>(ds, src.size()));
  }
  std::vector<DType> ds;
  for (const UOp& s : src) ds.push_back(s.dtype());
  return least_upper_dtype(ds);
}

DType dtype_from_uop(Ops op, std::span<const UOp> src, const Arg& arg) {
  switch (op) {
    case Ops::STORE:
    case Ops::LINEAR:
    case Ops::SINK:
    case Ops::PROGRAM:
    case Ops::SOURCE:
    case Ops::END:
    case Ops::BARRIER:
    case Ops::GROUP:
    case Ops::IF:
    case Ops::ENDIF:
    case Ops::TUPLE:
    case Ops::FUNCTION:
    case Ops::CUSTOM_FUNCTION:
    case Ops::REWRITE_ERROR:
      return dtypes::void_;
    case Ops::CALL:
      return src[0].dtype() == dtypes::void_ ? dtypes::void_ : DType();
    case Ops::CUSTOM:
    case Ops::CUSTOMI:
    case Ops::PYLITERAL:
    case Ops::INS:
    case Ops::NOOP:
      return DType();
    case Ops::INDEX:
      return src[0].dtype();
    case Ops::LOAD:
    case Ops::UNSHARD:
    case Ops::REDUCE:
    case Ops::AFTER:
    case Ops::RANGE:
    case Ops::CONTIGUOUS:
    case Ops::CONTIGUOUS_BACKWARD:
    case Ops::COPY:
    case Ops::STAGE:
    case Ops::DETACH:
    case Ops::MSTACK:
    case Ops::MSELECT:
    case Ops::ALLREDUCE:
    case Ops::SPECIAL:
      return src[0].dtype();
    case Ops::CMPLT:
    case Ops::CMPNE:
    case Ops::CMPEQ:
      return dtypes::bool_;
    case Ops::SIN:
    case Ops::LOG2:
    case Ops::EXP2:
    case Ops::SQRT:
    case Ops::RECIPROCAL:
      return src[0].base().is_invalid() ? dtypes::bool_ : least_upper_float(src[0].dtype());
    case Ops::WHERE:
      if (src[0].dtype() != dtypes::bool_) throw Error("where cond must be bool, got " + src[0].dtype().repr());
      return promo_dtype(src.subspan(1));
    case Ops::STACK:
      return src.empty() ? dtypes::void_ : promo_dtype(src);
    case Ops::WMMA:
      return src[2].dtype();
    case Ops::GETTUPLE: {
      const UOp& t = src[0].op() == Ops::FUNCTION ? src[0].src(0) : src[0];
      return t.src((size_t)arg.as_int()).dtype();
    }
    case Ops::GETADDR:
      return dtypes::uint64;
    case Ops::SHL:
    case Ops::SHR:
      for (const UOp& x : src)
        if (!dtypes::is_int(x.dtype()) && !x.base().is_invalid())
          throw Error(std::string("shift operands must be int, got ") + x.dtype().repr());
      return src[0].dtype();
    case Ops::BUFFER:
    case Ops::PARAM: {
      const ParamArg* p = arg.as<ParamArg>();
      if (!p) throw Error("BUFFER/PARAM must have ParamArg");
      return p->dtype;
    }
    case Ops::BINARY:
      return dtypes::uint8;
    case Ops::CAST:
    case Ops::BITCAST:
      if (!arg.is_dtype()) throw Error("CAST/BITCAST arg must be DType, got " + arg.repr());
      return arg.as_dtype();
    case Ops::CONST:
      if (arg.is_invalid() || arg.is_bool()) return dtypes::bool_;
      if (arg.is_int()) return dtypes::weakint;
      if (arg.is_float()) return dtypes::weakfloat;
      throw Error("no dtype for CONST with arg " + arg.repr());
    default:
      break;
  }
  if (GroupOp::Unary.has(op)) return src[0].dtype();
  if (GroupOp::Broadcastable.has(op)) return promo_dtype(src);
  if (GroupOp::Movement.has(op)) return src[0].dtype();
  throw Error(std::string("no dtype for ") + op_repr(op) + " with arg " + arg.repr());
}

UOp UOp::replace(std::optional<Ops> op, std::optional<DType> dtype, std::optional<std::vector<UOp>> src,
                 std::optional<Arg> arg, std::optional<Arg> tag) const {
  Ops o = op.value_or(this->op());
  DType d = dtype.has_value() ? *dtype : this->dtype();  // an explicit empty DType re-derives (dtype=None)
  bool same =
      o == this->op() && d == this->dtype() && (!arg || arg->same(this->arg())) && (!tag || tag->same(this->tag()));
  if (same && src) {
    if (src->size() != nsrc())
      same = false;
    else
      for (size_t i = 0; i < nsrc() && same; i++) same = (*src)[i] == this->src(i);
  }
  if (same) return *this;
  if (src) return UOp(o, d, std::span<const UOp>(*src), arg ? *arg : this->arg(), tag ? *tag : this->tag());
  return UOp(o, d, this->src(), arg ? *arg : this->arg(), tag ? *tag : this->tag());
}

UOp UOp::f(Ops op, Arg arg) const { return UOp(op, dtype(), {*this}, std::move(arg)); }
UOp UOp::f(Ops op, DType dt, Arg arg) const { return UOp(op, dt, {*this}, std::move(arg)); }

const PyConst UOp::val() const {
  if (op() != Ops::CONST) throw Error(std::string("val is only for CONST, got ") + op_repr(op()));
  return arg().as_const();
}

// ************************* graph walks *************************

// the toposort walk, appending each node (borrowed) to out
template <typename Out>
static void toposort_walk(detail::UOpNode* root, const std::function<bool(const UOp&)>& gate, bool enter_calls,
                          Out&& out) {
  // borrowed: every node is reachable from *this. A thread reuses one set and stack across walks; a gate that walks
  // again (a nested call) gets its own
  struct Scratch {
    ClearableRawNodeSet seen{64};
    struct Item {
      detail::UOpNode* node;
      bool visited;
    };
    PodStack<Item> stack;
    bool busy = false;
  };
  thread_local Scratch scratch;
  std::optional<Scratch> own;
  Scratch& w = scratch.busy ? own.emplace() : scratch;
  w.busy = true;
  struct Release {
    Scratch& w;
    ~Release() { w.busy = false; }
  } release{w};
  w.seen.clear(), w.stack.clear();
  ClearableRawNodeSet& seen = w.seen;
  auto& stack = w.stack;
  auto push = [&](detail::UOpNode * node, bool visited) __attribute__((always_inline)) {
    auto& it = stack.push();
    it.node = node, it.visited = visited;
  };
  push(root, false);
  while (!stack.empty()) {
    detail::UOpNode* node = stack.back().node;
    const bool visited = stack.back().visited;
    stack.pop_back();
    if (seen.contains(node)) continue;
    const UOp& u = *reinterpret_cast<const UOp*>(&node);
    if (!visited) {
      if (!gate || gate(u)) {
        push(node, true);
        uint32_t start = (!enter_calls && (u.op() == Ops::CALL || u.op() == Ops::FUNCTION)) ? 1 : 0;
        for (uint32_t i = node->nsrc; i > start; i--) push(node->srcs[i - 1], false);
      }
    } else {
      seen.insert(node);
      out(node);
    }
  }
}

std::vector<UOp> UOp::toposort(const std::function<bool(const UOp&)>& gate, bool enter_calls) const {
  std::vector<UOp> out;
  out.reserve(32);  // fewer regrowths (each copies the list) for the usual graphs of tens to thousands of nodes
  toposort_walk(n_, gate, enter_calls, [&](detail::UOpNode* n) { out.push_back(*reinterpret_cast<const UOp*>(&n)); });
  return out;
}

static thread_local ToposortMemo* t_toposort_memo = nullptr;
ToposortMemo::ToposortMemo() : outer_(t_toposort_memo) { t_toposort_memo = this; }
ToposortMemo::~ToposortMemo() { t_toposort_memo = outer_; }

NodeList UOp::toposort_borrowed() const {
  ToposortMemo* m = t_toposort_memo;
  if (m && n_ && m->root_.node() == n_) return m->list_;
  NodeList out;
  out.nodes.reserve(64);
  toposort_walk(n_, nullptr, true, [&](detail::UOpNode* n) { out.nodes.push_back(n); });
  if (m) m->root_ = *this, m->list_ = out;
  return out;
}

std::vector<UOp> UOp::backward_slice() const {
  auto t = toposort();
  t.pop_back();
  return t;
}

// true when pred holds for a node of root's backward slice (root included); a thread's scratch set and stack are
// reused across walks (these run a million times in a training step's codegen)
// Walks into a src only when enter(src) holds (a src whose slice cannot hold what pred looks for is skipped); with
// enter_calls false, a CALL's or FUNCTION's body (src 0) is not entered, as in toposort(enter_calls=False)
template <typename Pred, typename Enter>
static bool any_in_slice(detail::UOpNode* root, Pred pred, Enter enter, bool enter_calls = true) {
  struct Scratch {
    ClearableRawNodeSet seen{64};
    std::vector<detail::UOpNode*> st;
  };
  thread_local Scratch w;
  w.seen.clear(), w.st.clear();
  w.seen.insert(root);
  w.st.push_back(root);
  while (!w.st.empty()) {
    detail::UOpNode* n = w.st.back();
    w.st.pop_back();
    if (pred(n)) return true;
    uint32_t start = (!enter_calls && (n->op == Ops::CALL || n->op == Ops::FUNCTION)) ? 1 : 0;
    for (uint32_t i = start; i < n->nsrc; i++)
      if (enter(n->srcs[i]) && w.seen.insert(n->srcs[i])) w.st.push_back(n->srcs[i]);
  }
  return false;
}
template <typename Pred>
static bool any_in_slice(detail::UOpNode* root, Pred pred) {
  return any_in_slice(root, pred, [](detail::UOpNode*) { return true; });
}

bool UOp::in_backward_slice_with_self(const UOp& x, bool enter_calls) const {
  if (*this == x) return true;
  detail::UOpNode* target = x.n_;
  Ops op = target->op;
  // only the srcs whose slices hold a node of x's op can hold x
  return any_in_slice(
      n_, [target](detail::UOpNode* n) { return n == target; },
      [op](detail::UOpNode* s) { return s->slice_ops.has(op); }, enter_calls);
}

bool UOp::op_in_backward_slice_with_self(OpSet ops) const { return !(slice_ops() & ops).empty(); }

bool UOp::any_in_backward_slice_with_self(bool (*pred)(const UOp&)) const {
  return any_in_slice(n_, [pred](detail::UOpNode* n) { return pred(*reinterpret_cast<const UOp*>(&n)); });
}

bool UOp::any_in_backward_slice_with_self(bool (*pred)(const UOp&), OpSet pred_ops) const {
  if ((slice_ops() & pred_ops).empty()) return false;
  return any_in_slice(
      n_,
      [pred, pred_ops](detail::UOpNode* n) { return pred_ops.has(n->op) && pred(*reinterpret_cast<const UOp*>(&n)); },
      [pred_ops](detail::UOpNode* s) { return !(s->slice_ops & pred_ops).empty(); });
}

std::vector<UOp> UOp::split_uop(Ops sep) const {
  std::vector<UOp> out;
  std::vector<UOp> st{*this};
  while (!st.empty()) {
    UOp u = st.back();
    st.pop_back();
    if (u.op() == sep) {
      for (size_t i = u.nsrc(); i > 0; i--) st.push_back(u.src(i - 1));
    } else {
      out.push_back(u);
    }
  }
  return out;
}

int UOp::tuplize_cmp(const UOp& a, const UOp& b) {
  // python compares (op.value, arg, dtype, *src.tuplize) lexicographically; explicit stack over src pairs (one
  // scratch stack per thread: comparing args never compares nodes again)
  struct Frame {
    detail::UOpNode *a, *b;
    uint32_t i;
  };
  thread_local std::vector<Frame> st;
  st.clear();
  st.push_back({a.n_, b.n_, 0});
  while (!st.empty()) {
    Frame& f = st.back();
    if (f.a == f.b) {
      st.pop_back();
      if (!st.empty()) st.back().i++;
      continue;
    }
    if (f.i == 0) {
      if (f.a->op != f.b->op) return (int)f.a->op < (int)f.b->op ? -1 : 1;
      if (!f.a->arg.py_eq(f.b->arg)) return f.a->arg.py_cmp(f.b->arg) < 0 ? -1 : 1;
      if (f.a->dtype != f.b->dtype) return f.a->dtype < f.b->dtype ? -1 : 1;
      f.i = 1;
    }
    uint32_t k = f.i - 1;
    if (k >= f.a->nsrc || k >= f.b->nsrc) {
      if (f.a->nsrc != f.b->nsrc) return f.a->nsrc < f.b->nsrc ? -1 : 1;
      st.pop_back();
      if (!st.empty()) st.back().i++;
      continue;
    }
    st.push_back({f.a->srcs[k], f.b->srcs[k], 0});
  }
  return 0;
}

// ************************* cached properties *************************

// compute a cached property for every uncached node of the backward slice, srcs first
template <typename IsDone, typename Compute>
static void compute_cached(const UOp& root, IsDone is_done, Compute compute) {
  if (is_done(root)) return;
  // usually a new node over srcs that have the value already: no walk
  bool srcs_done = true;
  for (const UOp& s : root.src())
    if (!is_done(s)) {
      srcs_done = false;
      break;
    }
  if (srcs_done) {
    compute(root);
    return;
  }
  // a borrowed depth-first walk into the uncomputed nodes, each computed once its srcs are (what computing over
  // toposort(gate=not done) did, without building the list). compute may compute other properties, which walk at
  // the next level.
  struct Frame {
    detail::UOpNode* n;
    uint32_t i;
  };
  constexpr size_t kLevels = 16;
  thread_local std::vector<Frame> t_frames[kLevels];
  thread_local size_t t_level = 0;
  std::vector<Frame> deeper;
  std::vector<Frame>& st = t_level < kLevels ? t_frames[t_level] : deeper;
  t_level++;
  struct Leave {
    ~Leave() { t_level--; }
  } leave;
  auto view = [](detail::UOpNode* const& n) -> const UOp& { return *reinterpret_cast<const UOp*>(&n); };
  st.clear();
  st.push_back({root.node(), 0});
  while (!st.empty()) {
    Frame& f = st.back();
    if (f.i < f.n->nsrc) {
      detail::UOpNode* c = f.n->srcs[f.i++];
      if (!is_done(view(c))) st.push_back({c, 0});
    } else {
      detail::UOpNode* n = f.n;
      st.pop_back();
      if (!is_done(view(n))) compute(view(n));
    }
  }
}

// a recursive property cached per node: the value of every uncached node below root, srcs first, from `make(u)`
// (which reads its srcs' cached values); `done` publishes the value, first writer wins
template <typename T, typename Make>
static const T& cached_property(const UOp& root, std::atomic<bool> UOpCache::*done, T UOpCache::*value, Make make) {
  UOpCache* c = cache_of(root.node());
  if (!(c->*done).load(std::memory_order_acquire)) {
    compute_cached(
        root,
        [done](U u) {  // asking does not make a cache
          UOpCache* cu = u.node()->cache.load(std::memory_order_acquire);
          return cu && (cu->*done).load(std::memory_order_acquire);
        },
        [&](U u) {
          T v = make(u);
          UOpCache* cu = cache_of(u.node());
          detail::CacheLock lk(u.node());
          if (!(cu->*done).load(std::memory_order_relaxed)) {
            cu->*value = std::move(v);
            (cu->*done).store(true, std::memory_order_release);
          }
        });
  }
  return c->*value;
}

static std::pair<PyConst, PyConst> compute_min_max(const UOp& u);

// the reference's recursive property, cached per node like the others (computing it over the graph on every call was
// ~10% of scheduling: the scheduler asks for the device of the same buffers again and again)
static Arg compute_device(const UOp& u);

Arg UOp::device() const { return cached_property(*this, &UOpCache::device_done, &UOpCache::device, compute_device); }

// the reference's recursive property, cached per node (computed over the graph on every call it was ~4% of
// scheduling: the scheduler and codegen ask it of every INDEX, LOAD and STORE)
static std::optional<AddrSpace> compute_addrspace(const UOp& u) {
  auto of = [](U s) -> const std::optional<AddrSpace>& { return cache_of(s.node())->addrspace; };
  Ops o = u.op();
  if (o == Ops::PARAM || o == Ops::BUFFER) {
    const ParamArg* p = u.param_arg();
    return p && p->has_addrspace ? std::optional<AddrSpace>(p->addrspace) : std::nullopt;
  }
  if (o == Ops::SPECIAL || o == Ops::RANGE || o == Ops::LOAD) return AddrSpace::ALU;  // LOAD brings things into the ALU
  if (o == Ops::INDEX || o == Ops::CAST || o == Ops::AFTER || o == Ops::REDUCE || o == Ops::STORE || o == Ops::MSTACK ||
      o == Ops::MSELECT || o == Ops::END || o == Ops::UNSHARD || GroupOp::Movement.has(o))
    return of(u.src(0));
  if (o == Ops::STACK || o == Ops::WMMA || o == Ops::GROUP || GroupOp::Elementwise.has(o)) {
    std::optional<AddrSpace> first;
    for (const UOp& s : u.src()) {
      const std::optional<AddrSpace>& a = of(s);
      if (!a) continue;
      if (!first)
        first = a;
      else if (*first != *a)
        return std::nullopt;
    }
    return first;
  }
  return std::nullopt;
}

std::optional<AddrSpace> UOp::addrspace() const {
  return cached_property(*this, &UOpCache::addrspace_done, &UOpCache::addrspace, compute_addrspace);
}

// one node's device from its sources' (already cached)
static Arg compute_device(const UOp& u) {
  auto of = [](U s) -> const Arg& { return cache_of(s.node())->device; };
  switch (u.op()) {
    case Ops::PARAM:
    case Ops::BUFFER:
      return u.param_arg() ? u.param_arg()->device : Arg();
    case Ops::AFTER:
      return of(u.src(0));
    case Ops::COPY:
      return u.arg();
    case Ops::ALLREDUCE:
      return u.arg()[1];
    case Ops::MSELECT: {
      const Arg& sd = of(u.src(0));
      if (!sd.is_tuple()) throw Error("mselect must be on tuple device, getting " + sd.repr());
      return sd[(size_t)u.arg().as_int()];
    }
    case Ops::MSTACK: {
      std::vector<Arg> ds;
      for (const UOp& s : u.src()) ds.push_back(of(s));
      return Arg::tuple(ds);
    }
    default:
      for (const UOp& s : u.src())
        if (!of(s).is_none()) return of(s);
      return Arg();
  }
}

std::pair<PyConst, PyConst> UOp::min_max() const {
  return cached_property(*this, &UOpCache::mm_done, &UOpCache::mm, compute_min_max);
}
PyConst UOp::vmin() const { return min_max().first; }
PyConst UOp::vmax() const { return min_max().second; }

static bool all_intlike(std::initializer_list<PyConst> v) {
  for (const PyConst& c : v)
    if (!(c.is_int() || c.is_bool())) return false;
  return true;
}

static std::pair<PyConst, PyConst> compute_min_max(const UOp& u) {
  Ops op = u.op();
  DType dt = u.dtype();
  auto mm = [](U x) { return x.min_max(); };
  if (GroupOp::Binary.has(op) && !dtypes::is_float(dt)) {
    auto [s0_vmin, s0_vmax] = mm(u.src(0));
    auto [s1_vmin, s1_vmax] = mm(u.src(1));
    bool ints = all_intlike({s0_vmin, s0_vmax, s1_vmin, s1_vmax}) && !s0_vmin.is_invalid();
    if (op == Ops::ADD) return {py_add(s0_vmin, s1_vmin), py_add(s0_vmax, s1_vmax)};
    if (op == Ops::SUB) return {py_sub(s0_vmin, s1_vmax), py_sub(s0_vmax, s1_vmin)};
    if (op == Ops::AND && dtypes::is_int(dt) && s1_vmin == s1_vmax && !py_lt(s1_vmin, PyConst(0)))
      return {PyConst(0), py_lt(s0_vmin, PyConst(0)) ? s1_vmax : py_min(s0_vmax, s1_vmax)};
    if (op == Ops::MUL) {
      PyConst v[4] = {py_mul(s0_vmin, s1_vmin), py_mul(s0_vmin, s1_vmax), py_mul(s0_vmax, s1_vmin),
                      py_mul(s0_vmax, s1_vmax)};
      PyConst lo = v[0], hi = v[0];
      for (int i = 1; i < 4; i++) lo = py_min(lo, v[i]), hi = py_max(hi, v[i]);
      return {lo, hi};
    }
    if ((op == Ops::SHL || op == Ops::SHR) && s1_vmin == s1_vmax && all_intlike({s0_vmin, s0_vmax, s1_vmin})) {
      pyint sh = s1_vmin.as_int(), a = s0_vmin.as_int(), b = s0_vmax.as_int();
      if (sh >= 0 && sh < 127) {
        if (op == Ops::SHL) return {PyConst(sat_mul(a, (pyint)1 << sh)), PyConst(sat_mul(b, (pyint)1 << sh))};
        return {PyConst(a >> sh), PyConst(b >> sh)};
      }
    }
    if (op == Ops::CMOD && ints) {
      pyint a = s0_vmin.as_int(), b = s0_vmax.as_int(), lo = s1_vmin.as_int(), hi = s1_vmax.as_int();
      if (lo == hi && lo > 0) {
        pyint c = lo;
        pyint rmin = a > 0 ? 0 : (0 >= a && a > -c) ? a : -(hi - 1);
        pyint rmax = b < 0 ? 0 : (0 <= b && b < c) ? b : c - 1;
        return {PyConst(rmin), PyConst(rmax)};
      }
      if (lo > 0) {
        if (a >= 0) return {PyConst(0), PyConst(hi - 1)};
        if (b <= 0) return {PyConst(-(hi - 1)), PyConst(0)};
        return {PyConst(-(hi - 1)), PyConst(hi - 1)};
      }
      if (hi < 0) {
        if (a >= 0) return {PyConst(0), PyConst(-lo - 1)};
        if (b <= 0) return {PyConst(-(-lo - 1)), PyConst(0)};
        return {PyConst(-(-lo - 1)), PyConst(-lo - 1)};
      }
    }
    if (op == Ops::CDIV && ints) {
      pyint a = s0_vmin.as_int(), b = s0_vmax.as_int(), lo = s1_vmin.as_int(), hi = s1_vmax.as_int();
      if ((lo > 0 && hi > 0) || (lo < 0 && hi < 0)) {
        pyint v[4] = {cdiv(a, lo), cdiv(a, hi), cdiv(b, lo), cdiv(b, hi)};
        return {PyConst(*std::min_element(v, v + 4)), PyConst(*std::max_element(v, v + 4))};
      }
    }
    if (op == Ops::FLOORDIV && ints) {
      pyint a = s0_vmin.as_int(), b = s0_vmax.as_int(), lo = s1_vmin.as_int(), hi = s1_vmax.as_int();
      if (a > b) return {PyConst(0), PyConst(0)};
      if ((lo > 0 && hi > 0) || (lo < 0 && hi < 0)) {
        pyint v[4] = {floordiv(a, lo), floordiv(a, hi), floordiv(b, lo), floordiv(b, hi)};
        return {PyConst(*std::min_element(v, v + 4)), PyConst(*std::max_element(v, v + 4))};
      }
    }
    if (op == Ops::FLOORMOD && ints) {
      pyint a = s0_vmin.as_int(), b = s0_vmax.as_int(), lo = s1_vmin.as_int(), hi = s1_vmax.as_int();
      if (a > b) return {PyConst(0), PyConst(0)};
      if (lo == hi && lo > 0) {
        pyint c = lo;
        if (floordiv(a, c) == floordiv(b, c)) return {PyConst(floormod(a, c)), PyConst(floormod(b, c))};
        return {PyConst(0), PyConst(c - 1)};
      }
      if (lo == hi && lo < 0) {
        pyint c = lo;
        if (floordiv(a, c) == floordiv(b, c)) return {PyConst(floormod(a, c)), PyConst(floormod(b, c))};
        return {PyConst(c + 1), PyConst(0)};
      }
      if (lo > 0) return {PyConst(0), PyConst(hi - 1)};
      if (hi < 0) return {PyConst(lo + 1), PyConst(0)};
    }
    if (op == Ops::XOR && s1_vmin == s1_vmax && s1_vmin == PyConst(-1) && s0_vmin.is_int() && s0_vmax.is_int())
      return {PyConst(~s0_vmax.i), PyConst(~s0_vmin.i)};
    if (op == Ops::MAX) return {py_max(s0_vmin, s1_vmin), py_max(s0_vmax, s1_vmax)};
    if (op == Ops::CMPLT) return {PyConst(py_lt(s0_vmax, s1_vmin)), PyConst(py_lt(s0_vmin, s1_vmax))};
    if (op == Ops::CMPNE) {
      bool lo = py_lt(s0_vmax, s1_vmin) || py_lt(s1_vmax, s0_vmin);
      bool all_eq = s0_vmin == s0_vmax && s0_vmax == s1_vmin && s1_vmin == s1_vmax;
      return {PyConst(lo), PyConst(!all_eq)};
    }
    if (op == Ops::OR && dt == dtypes::bool_)
      return {s0_vmin.truthy() ? s0_vmin : s1_vmin, s0_vmax.truthy() ? s0_vmax : s1_vmax};
    if (op == Ops::AND && dt == dtypes::bool_)
      return {!s0_vmin.truthy() ? s0_vmin : s1_vmin, !s0_vmax.truthy() ? s0_vmax : s1_vmax};
  }
  if (op == Ops::WHERE && dtypes::is_int(dt)) {
    auto [a0, a1] = mm(u.src(1));
    auto [b0, b1] = mm(u.src(2));
    return {py_min(a0, b0), py_max(a1, b1)};
  }
  if ((op == Ops::PARAM || op == Ops::BUFFER) && u.param_arg() && u.param_arg()->has_vminmax)
    return {u.param_arg()->vmin, u.param_arg()->vmax};
  if ((op == Ops::RANGE || op == Ops::SPECIAL) && dt != dtypes::void_) {
    // (end - 1).vmax: an int literal end folds to end - 1 (no node is built for it: most ranges end at one)
    if (const UOp& end = u.src(0); end.op() == Ops::CONST && end.val().is_int())
      return {PyConst(0), py_sub(end.val(), PyConst(1))};
    return {PyConst(0), (u.src(0) - UOp::const_(PyConst(1))).vmax()};
  }
  if (op == Ops::AFTER) return mm(u.src(0));
  if (op == Ops::STACK && u.nsrc() > 0) {
    PyConst lo = u.src(0).vmin(), hi = u.src(0).vmax();
    for (size_t i = 1; i < u.nsrc(); i++) lo = py_min(lo, u.src(i).vmin()), hi = py_max(hi, u.src(i).vmax());
    return {lo, hi};
  }
  if (op == Ops::CONST && !u.arg().is_invalid()) return {u.val(), u.val()};
  if (op == Ops::INDEX) return mm(u.src(0));
  if (op == Ops::CAST) {
    auto [smin, smax] = mm(u.src(0));
    if (smin.is_number() && smax.is_number()) {
      bool finite = (!smin.is_float() || std::isfinite(smin.f)) && (!smax.is_float() || std::isfinite(smax.f));
      if (finite) {
        if (dtypes::is_float(dt)) {
          if (has_truncate(dt)) smin = truncate(dt, smin), smax = truncate(dt, smax);
        } else if (dtypes::is_int(dt)) {
          smin = PyConst(smin.as_int()), smax = PyConst(smax.as_int());
        }
      }
      if (dtypes::is_unsigned(dt) && !py_lt(smin, PyConst(0)) && !py_lt(dt.max(), smax)) return {smin, smax};
      if (contains(dtypes::floats, dt) || contains(dtypes::sints, dt) || dt == dtypes::weakint)
        return {py_max(dt.min(), smin), py_min(smax, dt.max())};
    }
  }
  return {dt.min(), dt.max()};
}

// ---- shape ----

sint::sint(UOp u) : i_(0), u_(std::move(u)) {
  if (!u_) throw Error("sint from a null UOp");
}
UOp sint::to_uop(DType dtype) const { return sint_to_uop(*this, dtype); }
std::string sint::str() const { return is_int() ? pyint_str(i_) : u_.render(); }
pyint sint::max_int() const { return is_int() ? i_ : u_.vmax().as_int(); }

UOp sint_to_uop(const sint& x, DType dtype) {
  if (!dtype) dtype = dtypes::weakint;
  if (x.is_int()) return UOp::const_(PyConst(x.i()), dtype);
  return x.u().cast(dtype);
}

bool shape_eq(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (!a[i].same(b[i])) return false;
  return true;
}

static std::optional<Shape> broadcast_shape(const std::vector<Shape>& shapes) {
  bool all_same = true;
  for (const Shape& s : shapes) all_same &= shape_eq(s, shapes[0]);
  if (all_same) return shapes[0];
  size_t mx = 0;
  for (const Shape& s : shapes) mx = std::max(mx, s.size());
  Shape ret;
  for (size_t d = 0; d < mx; d++) {
    std::vector<sint> rest;
    for (const Shape& s : shapes) {
      size_t pad = mx - s.size();
      sint v = d < pad ? sint(1) : s[d - pad];
      if (!v.is_int() || v.i() != 1) {
        bool dup = false;
        for (const sint& r : rest) dup |= r.same(v);
        if (!dup) rest.push_back(v);
      }
    }
    if (rest.size() > 1) {
      std::string msg = "shape mismatch: objects cannot be broadcast to a single shape (";
      for (size_t i = 0; i < shapes.size(); i++) {
        msg += i ? ", (" : "(";
        for (size_t k = 0; k < shapes[i].size(); k++) msg += (k ? ", " : "") + shapes[i][k].str();
        msg += shapes[i].size() == 1 ? ",)" : ")";
      }
      throw Error(msg + ")");
    }
    ret.push_back(rest.empty() ? sint(1) : rest[0]);
  }
  return ret;
}

static pyint prod_int(const Shape& s, bool* symbolic) {
  pyint p = 1;
  for (const sint& x : s) {
    if (!x.is_int())
      *symbolic = true;
    else
      p = sat_mul(p, x.i());
  }
  return p;
}

static std::optional<Shape> compute_shape(const UOp& u);

// like cached_property, except that a () shape, the shape of every scalar op in a kernel, is a flag of the node:
// no cache is made for it
static const std::optional<Shape>& scalar_shape() {
  static const std::optional<Shape> scalar{Shape{}};
  return scalar;
}
// computes the shapes of u and of the nodes below it that have none yet (out of line: the usual call finds the flag or
// the cached shape and returns without a frame)
__attribute__((noinline)) static const std::optional<Shape>& compute_shape_opt(const UOp& self) {
  auto is_done = [](U u) {
    if (u.node()->flags.load(std::memory_order_acquire) & detail::kScalarShape) return true;
    UOpCache* c = u.node()->cache.load(std::memory_order_acquire);
    return c && c->shape_done.load(std::memory_order_acquire);
  };
  if (!is_done(self)) {
    compute_cached(self, is_done, [](U u) {
      std::optional<Shape> v = compute_shape(u);
      if (v && v->empty()) {
        u.node()->flags.fetch_or(detail::kScalarShape, std::memory_order_release);
        return;
      }
      UOpCache* cu = cache_of(u.node());
      detail::CacheLock lk(u.node());
      if (!cu->shape_done.load(std::memory_order_relaxed)) {
        cu->shape = std::move(v);
        cu->shape_done.store(true, std::memory_order_release);
      }
    });
  }
  if (self.node()->flags.load(std::memory_order_acquire) & detail::kScalarShape) return scalar_shape();
  return cache_of(self.node())->shape;
}

const std::optional<Shape>& UOp::shape_opt() const {
  if (n_->flags.load(std::memory_order_acquire) & detail::kScalarShape) return scalar_shape();
  if (UOpCache* c = n_->cache.load(std::memory_order_acquire); c && c->shape_done.load(std::memory_order_acquire))
    return c->shape;
  return compute_shape_opt(*this);
}

const Shape& UOp::shape() const {
  const auto& s = shape_opt();
  if (!s) throw Error(std::string("shape requested, but ") + op_repr(op()) + " doesn't have a shape");
  return *s;
}

Shape UOp::as_shape() const {
  if (op() == Ops::CONST) return {sint(val().as_int())};
  if (op() != Ops::STACK) return {ssimplify()};
  Shape r;
  for (const UOp& s : src()) r.push_back(s.op() == Ops::CONST ? sint(s.val().as_int()) : s.ssimplify());
  return r;
}

Arg UOp::marg_arg() const {
  if (op() != Ops::PERMUTE && op() != Ops::FLIP) throw Error(std::string(op_repr(op())) + " has no tuple marg");
  return arg();
}

// _pm_resolve_params: a PARAM becomes the arg in its slot (ctx: the FUNCTION's args)
static const PatternMatcher& pm_resolve_params() {
  static const PatternMatcher pm(
      "_pm_resolve_params",
      {
          TG_RULE(UPat(Ops::PARAM).named("p"),
                  [](std::vector<UOp>& ctx, UOp p) {
                    size_t slot = (size_t)p.param_arg()->slot;
                    if (slot >= ctx.size())
                      throw Error("PARAM slot " + std::to_string(slot) + " out of range of the FUNCTION's args");
                    return ctx[slot];
                  }),
      });
  return pm;
}

// [lo, hi] of an int or of an int-valued node
static bool int_bounds(const sint& x, pyint& lo, pyint& hi) {
  if (x.is_int()) {
    lo = hi = x.i();
    return true;
  }
  auto [a, b] = x.u().min_max();
  if (!a.is_int() || !b.is_int()) return false;
  lo = a.as_int(), hi = b.as_int();
  return true;
}
// A PAD/SHRINK fits when the bounds of its offsets prove it, taken as they are (as_shape would simplify each one
// first, and the checks below build nodes): when this says yes, so would those checks, since a simplified offset
// has the same values. No means: check the way the reference does.
static bool fits_by_bounds(Ops op, const Shape& ps, const UOp& offsets, const Shape& sz) {
  std::vector<sint> off;
  if (offsets.op() == Ops::STACK)
    for (const UOp& x : offsets.src()) off.push_back(x.op() == Ops::CONST ? sint(x.val().as_int()) : sint(x));
  else
    off.push_back(offsets.op() == Ops::CONST ? sint(offsets.val().as_int()) : sint(offsets));
  if (off.size() != ps.size() || sz.size() != ps.size()) return false;
  for (size_t i = 0; i < ps.size(); i++) {
    pyint olo, ohi, nlo, nhi, slo, shi;
    if (!int_bounds(off[i], olo, ohi) || !int_bounds(sz[i], nlo, nhi) || !int_bounds(ps[i], slo, shi)) return false;
    // SHRINK: 0 <= o, n >= 0, o + n <= s; PAD: n >= 0, 0 <= o, o + s <= n
    if (olo < 0 || nlo < 0) return false;
    if (op == Ops::SHRINK ? ohi + nhi > slo : ohi + shi > nlo) return false;
  }
  return true;
}

static std::optional<Shape> compute_shape(const UOp& u) {
  Ops op = u.op();
  switch (op) {
    case Ops::IF:
    case Ops::BARRIER:
    case Ops::SINK:
    case Ops::REWRITE_ERROR:
    case Ops::ENDIF:
    case Ops::GROUP:
    case Ops::LINEAR:
    case Ops::PROGRAM:
    case Ops::SOURCE:
    case Ops::TUPLE:
    case Ops::FUNCTION:
    case Ops::CUSTOM_FUNCTION:
    case Ops::PYLITERAL:
      return std::nullopt;
    case Ops::CALL:
      return u.dtype() == dtypes::void_ ? std::nullopt : std::optional<Shape>(Shape{});
    case Ops::INS:
      return u.dtype() == dtypes::void_ ? std::nullopt : std::optional<Shape>(Shape{});
    case Ops::NOOP:
      return u.nsrc() >= 1 ? u.src(0).shape_opt() : std::nullopt;
    case Ops::GETTUPLE: {
      // GETTUPLE extracts from a TUPLE (possibly through a FUNCTION)
      const UOp& fn = u.src(0);
      const UOp& in_tuple = fn.op() == Ops::FUNCTION ? fn.src(0) : fn;
      if (in_tuple.op() != Ops::TUPLE)
        throw Error("GETTUPLE requires a TUPLE, got " + std::string(op_repr(in_tuple.op())));
      std::optional<Shape> inner = in_tuple.src((size_t)u.arg().as_int()).shape_opt();
      if (!inner || fn.op() != Ops::FUNCTION) return inner;
      // through a FUNCTION: the internal PARAMs in symbolic dims become the call's args (_pm_resolve_params, walk)
      std::vector<UOp> args(fn.src().begin() + 1, fn.src().end());
      Shape out;
      for (const sint& s : *inner) {
        if (s.is_int())
          out.push_back(s);
        else
          out.push_back(sint(graph_rewrite(s.u(), pm_resolve_params(), RewriteOpts{.ctx = &args, .walk = true})));
      }
      return out;
    }
    case Ops::INDEX: {
      Shape shp;
      for (size_t i = 1; i < u.nsrc(); i++)
        for (const sint& s : u.src(i).shape()) shp.push_back(s);
      const Shape& b = u.src(0).shape();
      for (size_t i = u.nsrc() - 1; i < b.size(); i++) shp.push_back(b[i]);
      return shp;
    }
    case Ops::STACK: {
      if (u.nsrc() == 0) return Shape{};
      Shape s{sint((pyint)u.nsrc())};
      for (const sint& x : u.src(0).shape()) s.push_back(x);
      return s;
    }
    case Ops::CONST:
    case Ops::GETADDR:
    case Ops::RANGE:
    case Ops::SPECIAL:
      return Shape{};
    case Ops::BUFFER:
      return u.nsrc() ? u.src(0).as_shape() : Shape{};
    case Ops::PARAM:
      return u.src(0).op() == Ops::NOOP ? std::nullopt : std::optional<Shape>(u.src(0).as_shape());
    case Ops::CUSTOM:
    case Ops::CUSTOMI: {
      if (u.dtype() == dtypes::void_) return std::nullopt;
      std::vector<Shape> in;
      for (const UOp& s : u.src())
        if (s.shape_opt()) in.push_back(*s.shape_opt());
      return in.empty() ? std::nullopt : broadcast_shape(in);
    }
    case Ops::STAGE: {
      Shape s;
      for (size_t i = 1; i < u.nsrc(); i++) s.push_back(sint(py_add(u.src(i).vmax(), PyConst(1)).as_int()));
      for (const sint& x : u.src(0).shape()) s.push_back(x);
      return s;
    }
    case Ops::MSTACK:
    case Ops::MSELECT:
    case Ops::DETACH:
    case Ops::CONTIGUOUS:
    case Ops::CONTIGUOUS_BACKWARD:
    case Ops::AFTER:
    case Ops::LOAD:
    case Ops::COPY:
    case Ops::ALLREDUCE:
    case Ops::STORE:
    case Ops::END:
      return u.src(0).shape_opt();
    case Ops::BITCAST: {
      const auto& ps = u.src(0).shape_opt();
      if (!ps) return std::nullopt;
      int osz = u.dtype().itemsize(), isz = u.src(0).dtype().itemsize();
      if (osz != isz && !ps->empty()) {
        Shape r = *ps;
        const sint& last = r.back();
        if (last.is_int()) {
          if ((last.i() * isz) % osz) throw Error("unsupported size in bitcast");
          r.back() = sint(last.i() * isz / osz);
        } else {
          r.back() = (last.u() * PyConst((pyint)isz)).floordiv(UOp::const_(PyConst((pyint)osz))).ssimplify();
        }
        return r;
      }
      return ps;
    }
    default:
      break;
  }
  if (GroupOp::Movement.has(op) || op == Ops::REDUCE) {
    const auto& psopt = u.src(0).shape_opt();
    if (!psopt)
      throw Error(std::string("movement op ") + op_repr(op) + " requires shape, " + op_repr(u.src(0).op()) +
                  " doesn't have one");
    const Shape& ps = *psopt;
    switch (op) {
      case Ops::RESHAPE: {
        Shape m = u.src(1).as_shape();
        for (const sint& x : m)
          if (x.is_int() && x.i() < 0) throw Error("shape can't contain negative numbers");
        bool sym = false;
        if (prod_int(ps, &sym) != prod_int(m, &sym) && !sym)
          throw Error("bad reshape: " + mixin::shape_str(ps) + " -> " + mixin::shape_str(m));
        return m;
      }
      case Ops::EXPAND: {
        Shape m = u.src(1).as_shape();
        m.insert(m.end(), ps.begin(), ps.end());
        return m;
      }
      case Ops::PERMUTE: {
        const auto& order = u.arg().items();
        std::vector<pyint> sorted;
        for (const Arg& i : order) sorted.push_back(i.as_int());
        std::sort(sorted.begin(), sorted.end());
        for (size_t i = 0; i < sorted.size(); i++)
          if (sorted[i] != (pyint)i) sorted.clear();
        if (sorted.size() != ps.size())
          throw Error("invalid permutation " + u.arg().repr() + " of len " + std::to_string(ps.size()));
        Shape r;
        for (const Arg& i : order) r.push_back(ps[(size_t)i.as_int()]);
        return r;
      }
      case Ops::PAD:
      case Ops::SHRINK: {
        // offsets and sizes must fit (resolve: symbolic bounds that may fit pass)
        Shape sz = u.src(2).as_shape();
        if (fits_by_bounds(op, ps, u.src(1), sz)) return sz;
        Shape off = u.src(1).as_shape();
        bool ok = off.size() == ps.size() && sz.size() == ps.size();
        for (size_t i = 0; ok && i < ps.size(); i++) {
          const sint &s = ps[i], &o = off[i], &n = sz[i];
          ok = op == Ops::PAD ? mixin::resolve(mixin::s_ge(n, 0)) && mixin::resolve(mixin::s_le(0, o)) &&
                                    mixin::resolve(mixin::s_le(mixin::operator+(o, s), n))
                              : mixin::resolve(mixin::s_le(0, o)) && mixin::resolve(mixin::s_ge(n, 0)) &&
                                    mixin::resolve(mixin::s_le(mixin::operator+(o, n), s));
        }
        if (!ok) {
          std::string m = "(";
          for (size_t i = 0; i < std::min(off.size(), sz.size()); i++)
            m += (i ? ", (" : "(") + off[i].str() + ", " + sz[i].str() + ")";
          throw Error(std::string(op == Ops::PAD ? "invalid pad " : "invalid shrink ") + m +
                      (std::min(off.size(), sz.size()) == 1 ? ",)" : ")") + " for " + mixin::shape_str(ps));
        }
        return sz;  // as_shape simplified them
      }
      case Ops::FLIP: {
        bool ok = u.arg().is_tuple() && u.arg().size() == ps.size();
        for (size_t i = 0; ok && i < ps.size(); i++) ok = u.arg()[i].is_bool();
        if (!ok) throw Error("bad flip on " + mixin::shape_str(ps) + ", " + u.arg().repr());
        return ps;
      }
      case Ops::REDUCE: {
        pyint n = u.arg()[1].as_int();
        if (n < 0 || (size_t)n > ps.size()) throw Error("invalid type for axis: " + pyint_str(n));
        return Shape(ps.begin() + (size_t)n, ps.end());
      }
      default:
        break;
    }
  }
  if (GroupOp::Unary.has(op) || op == Ops::CAST) return u.src(0).shape_opt();
  if (GroupOp::Broadcastable.has(op)) {
    // the common case, every src of the same shape, without copying the shapes
    bool same = true;
    for (const UOp& s : u.src()) {
      if (!s.shape_opt()) throw Error(std::string("None input shape not supported for ") + op_repr(op));
      same = same && shape_eq(*s.shape_opt(), *u.src(0).shape_opt());
    }
    if (same) return u.src(0).shape_opt();
    std::vector<Shape> in;
    for (const UOp& s : u.src()) in.push_back(*s.shape_opt());
    return broadcast_shape(in);
  }
  throw Error(std::string("no shape handling for ") + op_repr(op));
}

// ---- ranges ----

static void ordered_add(std::vector<UOp>& v, const UOp& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}
static void ordered_remove(std::vector<UOp>& v, const UOp& x) {
  auto it = std::find(v.begin(), v.end(), x);
  if (it != v.end()) v.erase(it);
}

const std::vector<UOp>& UOp::inner_ranges() const {
  return cached_property(*this, &UOpCache::ranges_done, &UOpCache::ranges, [](U u) {
    std::vector<UOp> ret;
    for (const UOp& s : u.src()) {  // s.ranges: s itself first when it is a RANGE, then its _ranges
      if (s.op() == Ops::RANGE) ordered_add(ret, s);
      for (const UOp& r : s.inner_ranges()) ordered_add(ret, r);
    }
    u.for_each_ended_range([&](U er) {
      if (er.op() == Ops::RANGE)
        ordered_remove(ret, er);
      else
        for (const UOp& s : er.inner_ranges()) ordered_remove(ret, s);  // er.ranges of a non-RANGE is its _ranges
    });
    return ret;
  });
}

std::vector<UOp> UOp::ranges() const {
  const std::vector<UOp>& inner = inner_ranges();
  if (op() == Ops::RANGE) {
    std::vector<UOp> r{*this};
    for (const UOp& x : inner) ordered_add(r, x);
    return r;
  }
  return inner;
}

const UOp& UOp::base() const {
  const UOp* u = this;
  while (GroupOp::Movement.has(u->op()) || u->op() == Ops::DETACH) u = &u->src(0);
  return *u;
}

// ************************* evaluation helpers *************************

bool UOp::as_bool() const {
  if (dtype() != dtypes::bool_) throw Error("eval with wrong dtype " + repr());
  UOp s = simplify();
  auto [lo, hi] = s.min_max();
  if (lo != hi)
    throw Error("eval failed to be a single number, range is " + lo.str() + " to " + hi.str() + " in " + s.render());
  return lo.truthy();
}
pyint UOp::as_int() const {
  if (!dtypes::is_int(dtype())) throw Error("eval with wrong dtype " + repr());
  UOp s = simplify();
  auto [lo, hi] = s.min_max();
  if (lo != hi)
    throw Error("eval failed to be a single number, range is " + lo.str() + " to " + hi.str() + " in " + s.render());
  return lo.as_int();
}

bool resolve(const UOp& x, bool default_value) {
  if (x.dtype() != dtypes::bool_) throw Error("UOp in resolve must be bool");
  // the reference's answer is the simplified expression's value when its bounds meet, else default_value: when the
  // unsimplified bounds already pin the value to default_value, both cases give it (simplifying keeps the value), so
  // the rewrite is skipped (shape checks of SHRINK/PAD with index-expression offsets ask this thousands of times)
  if (auto [lo0, hi0] = x.min_max(); lo0 == hi0 && lo0.truthy() == default_value) return default_value;
  UOp s = x.simplify();
  auto [lo, hi] = s.min_max();
  return lo == hi ? lo.truthy() : default_value;
}

bool UOp::overflows(DType d) const {
  auto [lo, hi] = min_max();
  return py_lt(lo, d.min()) || py_lt(d.max(), hi);
}

PyConst identity_element(Ops op, DType dt) {
  if (op == Ops::ADD) return dt.const_(PyConst(0));
  if (op == Ops::MUL) return dt.const_(PyConst(1));
  if (op == Ops::MAX) return dt.const_(dt.min());
  throw Error(std::string("no identity element for ") + op_repr(op));
}

std::string range_str(const UOp& u) {
  std::string r;
  const auto& items = u.arg().items();
  for (size_t i = 0; i + 1 < items.size(); i++) {
    pyint x = items[i].as_int();
    r += (i ? "_" : "") + (x >= 0 ? pyint_str(x) : "m" + pyint_str(-x));
  }
  return r;
}

// ************************* symbolic helpers *************************

static pyint pygcd(pyint a, pyint b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) {
    pyint t = a % b;
    a = b;
    b = t;
  }
  return a;
}

PyConst UOp::const_factor() const {
  if (op() == Ops::CONST) return val();
  if (op() == Ops::STACK) {
    pyint g = 0;
    for (const UOp& x : src()) g = pygcd(g, x.const_factor().as_int());
    return PyConst(g);
  }
  if (op() == Ops::ADD) return PyConst(pygcd(src(0).const_factor().as_int(), src(1).const_factor().as_int()));
  if (op() == Ops::MUL) {
    if (src(0).op() == Ops::CONST) return src(0).val();
    if (src(1).op() == Ops::CONST) return src(1).val();
    return PyConst(1);
  }
  if ((op() == Ops::PARAM || op() == Ops::BUFFER) && param_arg() && param_arg()->has_multiple_of)
    return PyConst((pyint)param_arg()->multiple_of);
  return PyConst(1);
}

UOp UOp::divides(pyint v) const {
  if (v == 1) return *this;
  if (v == 0 && (op() == Ops::CONST ||
                 ((op() == Ops::PARAM || op() == Ops::BUFFER) && param_arg() && param_arg()->has_multiple_of)))
    throw Error("integer modulo by zero");  // python's `val % 0`
  if (op() == Ops::CONST) {
    pyint x = val().as_int();
    return floormod(x, v) == 0 ? const_like(PyConst(::tg::floordiv(x, v))) : UOp();
  }
  if (op() == Ops::STACK) {
    std::vector<UOp> s;
    for (const UOp& x : src()) {
      UOp d = x.divides(v);
      if (!d) return UOp();
      s.push_back(d);
    }
    return UOp(Ops::STACK, DType(), s);
  }
  if (op() == Ops::ADD) {
    UOp d0 = src(0).divides(v);
    if (!d0) return UOp();
    UOp d1 = src(1).divides(v);
    if (!d1) return UOp();
    return d0 + d1;
  }
  if (op() == Ops::MUL) {
    if (UOp d0 = src(0).divides(v)) return d0 * src(1);
    if (UOp d1 = src(1).divides(v)) return src(0) * d1;
  }
  if ((op() == Ops::PARAM || op() == Ops::BUFFER) && param_arg() && param_arg()->has_multiple_of)
    return floormod(param_arg()->multiple_of, v) == 0 ? floordiv(UOp::const_(PyConst(v))) : UOp();
  return UOp();
}

std::pair<UOp, PyConst> UOp::pop_const(Ops op_) const {
  if (op() == op_ && src(1).op() == Ops::CONST) return {src(0), src(1).val()};
  return {*this, identity_element(op_, dtype())};
}

// collections.Counter over UOps, insertion ordered
struct UOpCounter {
  std::vector<std::pair<UOp, pyint>> items;
  pyint& at(const UOp& u) {
    for (auto& [k, v] : items)
      if (k == u) return v;
    items.push_back({u, 0});
    return items.back().second;
  }
  pyint get(const UOp& u) const {
    for (const auto& [k, v] : items)
      if (k == u) return v;
    return 0;
  }
};

UOp UOp::gcd(std::span<const UOp> uops) {
  std::vector<UOp> terms;
  std::vector<pyint> factors;
  for (const UOp& u : uops) {
    pyint f = u.const_factor().as_int();
    terms.push_back(u.divides(f));
    factors.push_back(f);
  }
  // reduce with & (min count, keys of the first counter in order)
  UOpCounter count;
  for (const UOp& t : terms[0].split_uop(Ops::MUL)) count.at(t)++;
  for (size_t i = 1; i < terms.size(); i++) {
    UOpCounter c;
    for (const UOp& t : terms[i].split_uop(Ops::MUL)) c.at(t)++;
    UOpCounter r;
    for (auto& [k, v] : count.items) {
      pyint m = std::min(v, c.get(k));
      if (m > 0) r.items.push_back({k, m});
    }
    count = r;
  }
  pyint g = 0;
  for (pyint f : factors) g = pygcd(g, f);
  // math.prod([*count.elements(), const]) starts from the python int 1
  std::vector<UOp> elems;
  for (auto& [k, v] : count.items)
    for (pyint i = 0; i < v; i++) elems.push_back(k);
  elems.push_back(terms[0].const_like(PyConst(g)));
  UOp acc = elems[0].mul(UOp::const_(PyConst(1)), true);
  for (size_t i = 1; i < elems.size(); i++) acc = acc * elems[i];
  return acc;
}

UOp UOp::divide_exact(const UOp& v) const {
  if (*this == v) return const_like(1);
  if (v.op() == Ops::CONST) return divides(v.val().as_int());
  if (op() == Ops::ADD) {
    UOp s0 = src(0).divide_exact(v);
    if (!s0) return UOp();
    UOp s1 = src(1).divide_exact(v);
    if (!s1) return UOp();
    return s0 + s1;
  }
  if (op() == Ops::MUL) {
    auto [fac, cst] = pop_const(Ops::MUL);
    auto [div_fac, div_cst] = v.pop_const(Ops::MUL);
    UOpCounter nc;
    for (const UOp& t : fac.split_uop(Ops::MUL)) nc.at(t)++;
    for (const UOp& t : div_fac.split_uop(Ops::MUL)) nc.at(t)--;
    pyint c = cst.as_int(), dc = div_cst.as_int();
    bool ok = floormod(c, dc) == 0;
    for (auto& [k, n] : nc.items) ok &= n >= 0;
    if (ok) {
      UOp acc = const_like(PyConst(::tg::floordiv(c, dc)));
      for (auto& [k, n] : nc.items)
        for (pyint i = 0; i < n; i++) acc = acc * k;
      return acc;
    }
  }
  return UOp();
}

// ************************* variables *************************

UOp UOp::variable(const std::string& name, PyConst min_val, PyConst max_val, DType dtype, int64_t multiple_of,
                  bool param) {
  if (!dtype) dtype = dtypes::weakint;
  auto* p = new ParamArg();
  p->slot = -1;
  p->dtype = dtype;
  p->has_name = true;
  p->name = name;
  p->has_vminmax = true;
  p->vmin = min_val;
  p->vmax = max_val;
  p->has_multiple_of = true;
  p->multiple_of = multiple_of;
  p->addrspace = AddrSpace::ALU;
  Arg a(static_cast<const ArgObj*>(p));
  UOp shape_arg(Ops::STACK, DType(), std::span<const UOp>{});
  return UOp(param ? Ops::PARAM : Ops::BUFFER, DType(), {shape_arg}, a);
}

bool UOp::is_variable() const {
  if (op() != Ops::BUFFER) return false;  // before the arg's type is asked (a dynamic_cast)
  const ParamArg* p = param_arg();
  return p && p->has_vminmax && p->has_addrspace && p->addrspace == AddrSpace::ALU && shape_opt() &&
         shape_opt()->empty();
}
bool UOp::is_bound_var() const {
  return op() == Ops::AFTER && nsrc() == 2 && src(0).is_variable() && src(1).op() == Ops::STORE &&
         src(1).src(0) == src(0) && src(1).src(1).op() == Ops::CONST;
}
std::string UOp::expr() const {
  const ParamArg* p = param_arg();
  if (!p || !p->has_name) throw Error("expr of a UOp without a name");
  return p->name;
}
UOp UOp::bind(pyint v) const {
  if (!is_variable()) throw Error(std::string("op is ") + op_repr(op()) + ", need Variable");
  UOp uval = const_like(PyConst(v));
  if (py_lt(uval.vmin(), vmin()) || py_lt(vmax(), uval.vmax()))
    throw Error("bind " + pyint_str(v) + " not in range [" + vmin().str() + ", " + vmax().str() + "]");
  if (param_arg()->has_multiple_of && !uval.divides(param_arg()->multiple_of))
    throw Error("bind " + pyint_str(v) + " not divisible by " + std::to_string(param_arg()->multiple_of));
  UOp st = store(uval);
  return after(std::span<const UOp>(&st, 1));
}
std::pair<UOp, pyint> UOp::unbind() const {
  if (!is_bound_var()) throw Error("can't unbind " + repr());
  return {src(0), src(1).src(1).val().as_int()};
}

std::vector<UOp> UOp::variables() const {
  std::vector<UOp> out;
  for (const UOp& x : toposort_borrowed()) {  // this node holds them
    UOp v;
    if (x.op() == Ops::RANGE && x.arg().is_tuple() && x.arg().items().back().kind() == Arg::Kind::Axis &&
        x.arg().items().back().as_axis() == AxisType::DEVICE)
      v = UOp::variable("_device_num", PyConst(0), x.vmax(), x.dtype(), 1, true);
    else if ((x.op() == Ops::PARAM && x.param_arg() && x.param_arg()->has_addrspace &&
              x.param_arg()->addrspace == AddrSpace::ALU) ||
             x.is_variable())
      v = x;
    else
      continue;
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  std::stable_sort(out.begin(), out.end(), [](U a, U b) { return a.expr() < b.expr(); });
  return out;
}

PyConst UOp::sym_infer(const std::unordered_map<std::string, pyint>& var_vals) const {
  UOp s = simplify();
  UOpMap<PyConst> val;
  for (const UOp& u : s.toposort()) {
    PyConst r;
    std::vector<PyConst> in;
    for (const UOp& x : u.src()) in.push_back(val.at(x));
    switch (u.op()) {
      case Ops::CONST:
        r = u.val();
        break;
      case Ops::PARAM:
      case Ops::BUFFER: {
        auto it = var_vals.find(u.expr());
        if (it == var_vals.end()) throw Error("sym_infer: no value for variable '" + u.expr() + "'");
        r = PyConst(it->second);
        break;
      }
      case Ops::STACK:
      case Ops::AFTER:
        r = in.empty() ? PyConst(0) : in[0];
        break;
      case Ops::CAST:  // float()/bool()/int() like the reference's renderer_infer
        r = dtypes::is_float(u.dtype())  ? PyConst(in[0].as_float())
            : u.dtype() == dtypes::bool_ ? PyConst(in[0].truthy())
                                         : PyConst(in[0].as_int());
        break;
      case Ops::BITCAST:
        r = ::tg::bitcast(in[0], u.src(0).dtype(), u.dtype());
        break;
      default:
        if (!GroupOp::ALU.has(u.op())) throw Error(std::string("sym_infer: cannot evaluate ") + op_repr(u.op()));
        r = exec_alu(u.op(), u.dtype(), in, false);
    }
    val.emplace(u, r);
  }
  return val.at(s);
}

// ************************* printing *************************

static std::string argstr(const UOp& u) {
  if (u.op() == Ops::REDUCE && u.arg().is_tuple()) {
    std::string r = "(";
    for (size_t i = 0; i < u.arg().size(); i++) r += (i ? ", " : "") + u.arg()[i].str();
    return r + ")";
  }
  if (u.arg().is_float()) return "ConstFloat(" + u.arg().repr() + ")";
  return u.arg().repr();
}

// pretty_print: a node referenced more than once is named x<N> on first print and referenced after
std::string UOp::repr() const {
  if (!n_) return "None";
  // numbering pass (the reference's dfs): preorder over first visits
  UOpMap<std::array<int64_t, 3>> cache;  // index, refcount, printed
  {
    std::vector<std::pair<UOp, size_t>> st{{*this, 0}};
    while (!st.empty()) {
      auto& [u, i] = st.back();
      if (i >= u.nsrc()) {
        st.pop_back();
        continue;
      }
      UOp s = u.src(i++);
      auto it = cache.find(s);
      if (it == cache.end()) it = cache.emplace(s, std::array<int64_t, 3>{(int64_t)cache.size(), 0, 0}).first;
      if (++it->second[1] == 1) st.push_back({s, 0});
    }
  }
  std::string out;
  struct Frame {
    UOp u;
    size_t d, i;
  };
  std::vector<Frame> st;
  auto open = [&](const UOp& u, size_t d) -> bool {
    auto it = cache.find(u);
    if (it == cache.end()) it = cache.emplace(u, std::array<int64_t, 3>{0, 0, 0}).first;
    auto& cx = it->second;
    if (cx[2]) {
      out += std::string(d, ' ') + "x" + std::to_string(cx[0]);
      return false;
    }
    cx[2] = 1;
    out += std::string(d, ' ');
    if (cx[1] > 1) out += "x" + std::to_string(cx[0]) + ":=";
    out += "UOp(" + op_repr(u.op()) + ", " + u.dtype().repr() + ", arg=" + argstr(u);
    if (!u.tag().is_none()) out += ", tag=" + u.tag().str();
    out += ", src=(";
    return true;
  };
  if (open(*this, 0)) st.push_back({*this, 0, 0});
  while (!st.empty()) {
    Frame& f = st.back();
    if (f.i >= f.u.nsrc()) {
      out += "))";
      st.pop_back();
      if (!st.empty()) out += ",";
      continue;
    }
    UOp s = f.u.src(f.i++);
    out += "\n";
    size_t d = f.d + 2;
    if (open(s, d))
      st.push_back({s, d, 0});
    else
      out += ",";
  }
  return out;
}
std::string uop_repr(const UOp& u) { return u.repr(); }

}  // namespace tg
