#include "lib/uop/rewrite.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "lib/uop/nodemap.h"
#include "lib/uop/track.h"

namespace tg {

namespace {

TG_HOT_INLINE bool is_opaque_call(const UOp& n) {
  if (n.op() == Ops::FUNCTION) return true;
  if (n.op() != Ops::CALL) [[likely]]
    return false;
  Ops b = n.src(0).op();
  return b == Ops::SINK || b == Ops::PROGRAM || b == Ops::LINEAR || b == Ops::COPY || b == Ops::CUSTOM_FUNCTION;
}

DType rebuild_dtype(const UOp& n, std::span<const UOp> new_src) {
  bool same = true;
  for (size_t i = 0; i < new_src.size() && same; i++) same = n.src(i).dtype() == new_src[i].dtype();
  if (same) return n.dtype();
  DType d = dtype_from_uop(n.op(), new_src, n.arg());
  return d ? d : n.dtype();
}

// a rebuilt node (new srcs); when its dtype had to be re-derived the trace must hold it for replay
UOp rebuild(const UOp& n, std::span<const UOp> new_src) {
  DType d = rebuild_dtype(n, new_src);
  UOp r(n.op(), d, new_src, n.arg(), n.tag());
  if (d != n.dtype()) track::note_uop(r);
  return r;
}

// Every graph_rewrite keeps its state for a node (replacement, bottom-up result, on-stack flag, waiting entries) in
// a slot of a dense array, and claims the node by writing (its serial, the slot) into the node's rw_slot: finding a
// node's state is then a load from the node the driver is reading anyway instead of a hash probe (the probes' cache
// misses were the driver's biggest cost). A rewrite's serial is active from its start to its reset; serials are never
// reused (40 bits), and an active serial owns its entry of g_active, so "is the claimant still running" is one load.
// A claim of a finished rewrite is free to take. A claim of a running rewrite on this thread (an outer rewrite, whose
// rule runs this one: it is suspended until this one returns) is taken and given back at reset. A node claimed by a
// rewrite running on another thread keeps its claim: this rewrite finds that node's slot through a small hash map.
constexpr int kSlotBits = 24;
constexpr uint64_t kSlotMask = (uint64_t(1) << kSlotBits) - 1, kSerialMask = (uint64_t(1) << 40) - 1;
constexpr size_t kActive = 4096;
std::atomic<uint64_t> g_next_serial{0};
std::atomic<uint64_t> g_active[kActive];
thread_local uint64_t t_next_serial = 0, t_serial_end = 0;  // a block of serials taken by this thread
uint64_t acquire_serial() {
  for (;;) {
    if (t_next_serial == t_serial_end) {  // the threads share the counter's line once per 1024 rewrites
      t_next_serial = g_next_serial.fetch_add(1024, std::memory_order_relaxed);
      t_serial_end = t_next_serial + 1024;
    }
    uint64_t s = t_next_serial++ & kSerialMask;
    uint64_t free = 0;
    if (s && g_active[s % kActive].compare_exchange_strong(free, s, std::memory_order_acq_rel)) return s;
  }
}
void release_serial(uint64_t s) { g_active[s % kActive].store(0, std::memory_order_release); }
bool serial_active(uint64_t s) { return s && g_active[s % kActive].load(std::memory_order_acquire) == s; }
thread_local size_t t_unclaimed = 0;
// the serials of this thread's running rewrites, outermost first: trivially destructible (a rewrite run by a static
// object's destructor at exit still finds them), the first kMaxTracked levels (a deeper rewrite's claims are left
// to the rewrites it runs, which keep their state for those nodes in their map)
constexpr size_t kMaxTracked = 64;
thread_local uint64_t t_running[kMaxTracked];
thread_local size_t t_depth = 0;
bool running_on_this_thread(uint64_t s) {
  const uint64_t* end = t_running + std::min(t_depth, kMaxTracked);
  return std::find(static_cast<const uint64_t*>(t_running), end, s) != end;
}

struct RewriteContext {
  const PatternMatcher* pm = nullptr;
  const PatternMatcher* bpm = nullptr;
  CtxRef ctx;
  bool enter_calls = false;
  NodeMap<UOp>* memo = nullptr;  // RewriteOpts::memo: read only during the rewrite, so its values stay put
  bool simplify_memo = false;    // RewriteOpts::simplify_memo: a node's cache keeps its result alive
  bool saw_opaque_call = false;  // a CALL body was left alone: its entries are not rewrite results
  UOp memo_tmp_;
  uint64_t serial_ = 0;  // while the rewrite runs (start() .. reset())
  // the driver's state for one node; node and replace are borrowed (see Entry), bpm holds its result
  struct Slot {
    detail::UOpNode* node;
    detail::UOpNode* replace = nullptr;  // null: not replaced (yet)
    int32_t wait_head = -1, wait_tail = -1;
    // the bottom-up rules' result once bpm_done (null = no match; borrowed, keep_ holds it: slots stay trivially
    // destructible, clearing them is free), and in its low bits (nodes are 8-aligned) the flags on_stack and
    // bpm_done: 32 bytes a slot, so that indexing and counting the slots are shifts
    uintptr_t bpm_bits = 0;
    static constexpr uintptr_t kOnStack = 1, kBpmDone = 2;
    bool on_stack() const { return bpm_bits & kOnStack; }
    void set_on_stack() { bpm_bits |= kOnStack; }
    bool bpm_done() const { return bpm_bits & kBpmDone; }
    detail::UOpNode* bpm() const { return reinterpret_cast<detail::UOpNode*>(bpm_bits & ~(kOnStack | kBpmDone)); }
    void set_bpm(detail::UOpNode* r) { bpm_bits = (bpm_bits & kOnStack) | kBpmDone | reinterpret_cast<uintptr_t>(r); }
  };
  static_assert(std::is_trivially_destructible_v<Slot> && sizeof(Slot) == 32);
  std::vector<Slot> slots_;
  BorrowedNodeMap<uint32_t> fallback_{16};  // the slots of nodes another running rewrite has claimed
  // the claims taken from this thread's outer rewrites: (node, its claim before), given back at reset
  std::vector<std::pair<detail::UOpNode*, uint64_t>> taken_;
  void start() {
    serial_ = acquire_serial();
    if (t_depth < kMaxTracked) t_running[t_depth] = serial_;
    t_depth++;
  }
  TG_HOT_INLINE Slot* find(detail::UOpNode* n) {
    uint64_t t = n->rw_slot.load(std::memory_order_acquire);
    if ((t >> kSlotBits) == serial_) {
      size_t i = t & kSlotMask;
      if (i < slots_.size() && slots_[i].node == n) return &slots_[i];
    }
    if (fallback_.size() == 0) return nullptr;
    uint32_t* i = fallback_.find(n);
    return i ? &slots_[*i] : nullptr;
  }
  // n's slot, added if n has none; the reference is valid until the next slot is added
  TG_HOT_INLINE Slot& get(detail::UOpNode* n) {
    if (Slot* s = find(n)) return *s;
    return add(n);
  }
  TG_HOT_INLINE uint32_t slot_index(detail::UOpNode* n) { return (uint32_t)(&get(n) - slots_.data()); }
  Slot& add(detail::UOpNode* n) {
    auto i = (uint32_t)slots_.size();
    slots_.push_back(Slot{n});
    if (i <= kSlotMask) {
      detail::NodeOp op;  // no other thread uses UOps: the claim is a plain store
      uint64_t t = n->rw_slot.load(std::memory_order_acquire);
      for (;;) {
        uint64_t owner = t >> kSlotBits;
        bool take = false;  // from an outer rewrite of this thread
        if (owner != serial_ && serial_active(owner) && !(take = running_on_this_thread(owner))) break;
        if (op.plain()) n->rw_slot.store((serial_ << kSlotBits) | i, std::memory_order_relaxed);
        if (op.plain() || n->rw_slot.compare_exchange_weak(t, (serial_ << kSlotBits) | i, std::memory_order_acq_rel,
                                                           std::memory_order_acquire)) {
          if (take) taken_.emplace_back(n, t);
          return slots_[i];
        }
      }
    }
    *fallback_.emplace(view(n)).first = i;
    t_unclaimed++;
    return slots_[i];
  }
  // node -> its replacement, both borrowed
  template <typename F>
  void for_each_replace(F&& f) const {
    for (const Slot& s : slots_)
      if (s.replace) f(s.node, s.replace);
  }
  // stack entries borrow their nodes (no reference counting on the hot path): every node on the stack is kept
  // alive until reset() by the root, the slots (replacements are nodes of the graph, bpm results or in keep_), or
  // keep_ (nodes the driver itself built)
  struct Entry {
    detail::UOpNode* n;
    detail::UOpNode* new_n;
    uint32_t slot;  // n's slot (unified_rewrite; found once, when the entry is made)
    int32_t stage;
  };
  // entries are written and read field by field: a copy of a whole entry through a temporary is written as scalars
  // and read back as vectors, which store forwarding cannot serve (a stall on every push of the driver)
  TG_HOT_INLINE void push(detail::UOpNode* n, int stage, detail::UOpNode* new_n, uint32_t slot) {
    Entry& e = stack.push();
    e.n = n, e.stage = stage, e.new_n = new_n, e.slot = slot;
  }
  static const UOp& view(detail::UOpNode* const& p) { return *reinterpret_cast<const UOp*>(&p); }
  // the ops some rule's root can have (every op while match stats are tracked: they count every node tried). A node
  // whose backward slice has none of them is never rewritten, nor is anything below it: it is its own replacement,
  // and the driver neither visits it nor keeps a slot for it
  OpSet live_;
  TG_HOT_INLINE bool untouched(const UOp& x) const { return (x.slice_ops() & live_).empty(); }
  // the replacement of x, or null
  TG_HOT_INLINE const UOp* replaced(const UOp& x) {
    if (untouched(x)) return &x;
    Slot* s = find(x.node());
    return s && s->replace ? &view(s->replace) : nullptr;
  }
  TG_HOT_INLINE bool is_replaced(const UOp& x) { return replaced(x) != nullptr; }
  // x -> v; v must stay alive until reset() (a node of the input graph, a bpm result or in keep_)
  void set_replace(const UOp& x, const UOp& v) {
    detail::UOpNode* vn = v.node();  // v may live in a slot, which adding a slot can move
    get(x.node()).replace = vn;
  }
  std::vector<UOp> keep_;
  PodStack<Entry> stack;
  // scratch of one node's fixed point and new sources (no allocation per node); borrowed like the entries
  std::vector<detail::UOpNode*> seen_, tmp_;
  static std::span<const UOp> view(const std::vector<detail::UOpNode*>& v) {
    return {reinterpret_cast<const UOp*>(v.data()), v.size()};
  }
  // the entries waiting for a node's replacement, in the order they started waiting: a list per node (its slot's
  // wait_head .. wait_tail) threaded through one pool (no allocation per waiting node)
  struct Waiting {
    Entry e;
    int32_t next;
  };
  static_assert(sizeof(Entry) == 24 && sizeof(Waiting) == 32);
  std::vector<Waiting> waiting_;
  void wait_for(const UOp& x, const Entry& e) {
    auto idx = (int32_t)waiting_.size();
    waiting_.push_back({e, -1});
    Slot& w = get(x.node());
    if (w.wait_tail < 0)
      w.wait_head = idx;
    else
      waiting_[w.wait_tail].next = idx;
    w.wait_tail = idx;
  }
  void reset() {
    seen_.clear(), tmp_.clear(), keep_.clear();
    memo_tmp_ = UOp();
    // a huge graph's slots are not kept for the next (mostly small) rewrite
    if (slots_.capacity() > (1u << 16) && slots_.size() * 16 < slots_.capacity())
      std::vector<Slot>().swap(slots_);
    else
      slots_.clear();
    fallback_.clear();
    stack.clear();
    waiting_.clear();
    if (serial_) {
      // give the outer rewrites their claims back (the nodes are theirs: alive), then end
      for (size_t i = taken_.size(); i > 0; i--)
        taken_[i - 1].first->rw_slot.store(taken_[i - 1].second, std::memory_order_release);
      taken_.clear();
      t_depth--;
      release_serial(serial_), serial_ = 0;
    }
  }

  UOp pm_rewrite(const UOp& x) {
    UOp r = pm->rewrite(x, ctx);
    no_gate();
    return r;
  }
  UOp cached_bpm_rewrite(const UOp& x) {
    if (Slot* c = find(x.node()); c && c->bpm_done()) return c->bpm() ? UOp(view(c->bpm())) : UOp();
    UOp r = bpm->rewrite(x, ctx);
    if (detail::bottom_up_gate) {  // request_bottom_up_gate(): like a thrown BottomUpGate, nothing is cached
      detail::bottom_up_gate = false;
      gate_requested_ = true;
      return UOp();
    }
    Slot& c = get(x.node());
    c.set_bpm(r ? r.node() : nullptr);
    if (r) keep_.push_back(r);
    return r;
  }
  bool gate_requested_ = false;  // the last cached_bpm_rewrite was gated by request_bottom_up_gate()
  // outside the fixed-point bottom-up driver a gate is an error, as an uncaught BottomUpGate was
  void no_gate() {
    if (gate_requested_ || detail::bottom_up_gate) {
      gate_requested_ = false, detail::bottom_up_gate = false;
      throw BottomUpGate();
    }
  }

  UOp walk_rewrite(const UOp& root) {
    // every node on this stack belongs to the input graph (replacements are not walked): borrowed
    std::vector<std::pair<detail::UOpNode*, bool>> stack{{root.node(), false}};
    while (!stack.empty()) {
      auto [np, processed] = stack.back();
      stack.pop_back();
      const UOp& n = view(np);
      if (is_replaced(n)) continue;
      if (!processed) {
        if (bpm) {
          UOp r = cached_bpm_rewrite(n);
          no_gate();
          if (r) {
            set_replace(n, r);  // r lives in a slot
            continue;
          }
        }
        stack.push_back({np, true});
        if (!enter_calls && is_opaque_call(n)) set_replace(n.src(0), n.src(0));
        for (size_t i = n.nsrc(); i > 0; i--)
          if (!untouched(n.src(i - 1)) && !is_replaced(n.src(i - 1))) stack.push_back({n.src(i - 1).node(), false});
      } else {
        std::vector<detail::UOpNode*>& new_src = tmp_;  // filled and used before any rule runs
        new_src.clear();
        bool changed = false;
        for (const UOp& x : n.src()) {
          const UOp* r = replaced(x);
          new_src.push_back(r ? r->node() : x.node());
          changed |= new_src.back() != x.node();
        }
        UOp new_n = changed ? rebuild(n, view(new_src)) : n;
        if (pm) {
          if (UOp r = pm_rewrite(new_n)) new_n = r;
        }
        set_replace(n, new_n);
        if (!(new_n == n)) keep_.push_back(std::move(new_n));
      }
    }
    const UOp* r = replaced(root);
    return r ? *r : root;
  }

  UOp unified_rewrite(const UOp& root) {
    if (untouched(root)) return root;
    {
      uint32_t si = slot_index(root.node());
      slots_[si].set_on_stack();
      push(root.node(), 0, root.node(), si);
    }
    const size_t limit = (size_t)REWRITE_STACK_LIMIT.value();
    // the node of slot si is replaced by v (alive until reset()); the entries waiting for it go back on the stack
    auto finish = [&](uint32_t si, detail::UOpNode* v) {
      Slot& w = slots_[si];
      w.replace = v;
      if (w.wait_head < 0) return;
      for (int32_t i = w.wait_head; i >= 0; i = waiting_[i].next) {
        const Entry& we = waiting_[i].e;
        push(we.n, we.stage, we.new_n, we.slot);
      }
      slots_[si].wait_head = slots_[si].wait_tail = -1;  // the pushes do not move the slots
    };
    // a node built here: kept alive for the rest of the rewrite (entries only borrow)
    auto own = [&](UOp&& u) -> detail::UOpNode* {
      detail::UOpNode* p = u.node();
      keep_.push_back(std::move(u));
      return p;
    };
    while (!stack.empty()) {
      if (stack.size() > limit) throw RewriteError("infinite loop in graph_rewrite (stack too big)");
      Entry e;
      {
        const Entry& top = stack.back();
        e.n = top.n, e.stage = top.stage, e.new_n = top.new_n, e.slot = top.slot;
      }
      stack.pop_back();
      const UOp& n = view(e.n);
      if (slots_[e.slot].replace) continue;
      if (e.stage == 0) {
        if (memo) {
          if (const UOp* m = memo->find(n)) {
            finish(e.slot, m->node());
            continue;
          }
        }
        if (simplify_memo && detail::cached_simplify(e.n, memo_tmp_)) {
          finish(e.slot, memo_tmp_ ? memo_tmp_.node() : e.n);  // memo_tmp_ lives in n's cache, n in the graph
          continue;
        }
        detail::UOpNode* new_np = e.n;
        if (bpm) {
          // apply the bottom-up rules to a fixed point on the node itself (bpm results live in the slots)
          UOp test_n = n;
          seen_.clear();  // a fixed point takes one or two rewrites: a linear search beats a hash set
          bool gated = false;
          try {
            while (test_n) {
              if (std::find(seen_.begin(), seen_.end(), test_n.node()) != seen_.end())
                throw RewriteError("infinite loop in fixed_point_rewrite");
              seen_.push_back(test_n.node());  // n itself or a bpm result
              new_np = test_n.node();
              test_n = cached_bpm_rewrite(test_n);
              if (gate_requested_) {  // request_bottom_up_gate(): the node being tested is final
                gate_requested_ = false;
                test_n = view(new_np);
                gated = true;
                break;
              }
            }
          } catch (const BottomUpGate&) {
            gated = true;  // the gate stops the descent: the node being tested is final
          }
          if (gated) {
            finish(e.slot, test_n.node());  // n itself or a bpm result
            continue;
          }
        }
        const UOp& new_n = view(new_np);
        const size_t depth = stack.size();
        push(e.n, 1, new_np, e.slot);
        if (!enter_calls && is_opaque_call(new_n)) set_replace(new_n.src(0), new_n.src(0)), saw_opaque_call = true;
        for (size_t i = new_n.nsrc(); i > 0; i--) {
          const UOp& x = new_n.src(i - 1);
          if (untouched(x)) continue;
          Slot& xs = get(x.node());
          if (xs.on_stack()) continue;
          xs.set_on_stack();
          push(x.node(), 0, x.node(), (uint32_t)(&xs - slots_.data()));
        }
        if (stack.size() != depth + 1) continue;
        // no src to visit first: the stage-1 entry just pushed is the next one popped, so it is taken here
        stack.pop_back();
        e.stage = 1, e.new_n = new_np;
        goto stage1;
      } else if (e.stage == 1) {
      stage1:
        const UOp& e_new_n = view(e.new_n);
        std::vector<detail::UOpNode*>& tmp = tmp_;  // used before any rule runs (nested rewrites use other contexts)
        tmp.clear();
        bool waiting = false;
        for (const UOp& x : e_new_n.src()) {
          const UOp* r = replaced(x);
          if (!r) {
            wait_for(x, e);
            waiting = true;
            break;
          }
          tmp.push_back(r->node());
        }
        if (waiting) continue;
        bool same = true;
        for (size_t i = 0; i < tmp.size() && same; i++) same = tmp[i] == e_new_n.src(i).node();
        detail::UOpNode* new_src_np;
        if (same) {
          UOp rw;
          if (!pm || !(rw = pm_rewrite(e_new_n))) {
            finish(e.slot, e.new_n);
            continue;
          }
          new_src_np = own(std::move(rw));
        } else {
          new_src_np = own(rebuild(e_new_n, view(tmp)));
        }
        // rewrite the replacement from scratch, then link it back to n (at once if no rule can touch it)
        if (untouched(view(new_src_np))) {
          finish(e.slot, new_src_np);
          continue;
        }
        push(e.n, 2, new_src_np, e.slot);
        push(new_src_np, 0, new_src_np, slot_index(new_src_np));
      } else {
        if (const UOp* r = replaced(view(e.new_n)); !r) {
          wait_for(view(e.new_n), e);
        } else {
          finish(e.slot, r->node());
        }
      }
    }
    const UOp* r = replaced(root);
    if (!r)
      throw RewriteError(
          "graph_rewrite did not finish: the root waits on itself (a replacement contains its own key?)");
    return *r;
  }
};

// RewriteContexts are reused per thread and nesting depth (rules run nested rewrites), keeping their tables' storage
struct ContextPool {
  std::vector<std::unique_ptr<RewriteContext>> free;
};

UOp run(const UOp& sink, const PatternMatcher* pm, const PatternMatcher* bpm, const RewriteOpts& opts,
        const std::source_location& loc) {
  thread_local ContextPool pool;
  track::Step step(opts.name, loc, sink, opts.bottom_up, opts.walk, opts.enter_calls);
  std::unique_ptr<RewriteContext> rc;
  if (!pool.free.empty()) {
    rc = std::move(pool.free.back());
    pool.free.pop_back();
  } else {
    rc = std::make_unique<RewriteContext>();
  }
  rc->pm = pm, rc->bpm = bpm, rc->ctx = opts.ctx, rc->enter_calls = opts.enter_calls;
  struct Return {
    ContextPool& pool;
    std::unique_ptr<RewriteContext>& rc;
    ~Return() {
      rc->reset();
      if (pool.free.size() < 16) pool.free.push_back(std::move(rc));
    }
  } ret{pool, rc};
  if ((opts.memo || opts.simplify_memo) && (bpm || opts.ctx.p || opts.walk || TRACK_MATCH_STATS.value() != 0))
    throw Error("graph_rewrite: a memo needs a pm without bpm, ctx or walk, and TRACK_MATCH_STATS=0");
  rc->memo = opts.memo, rc->simplify_memo = opts.simplify_memo, rc->saw_opaque_call = false;
  // skipping the nodes no rule can match changes nothing but the order the rules run in: only when that order
  // cannot be seen (no match stats, nothing recorded, no context the rules may write to). A walk visits each node
  // once, srcs first: a skipped subgraph has no node a rule runs on, and the others keep their order, so a walk
  // skips with a writable context too (pm_number_params numbers the PARAMs in the same order)
  if (TRACK_MATCH_STATS.value() != 0 || step.recording() || (opts.ctx.writable && !opts.walk)) {
    rc->live_ = ~OpSet();
  } else {
    rc->live_ = OpSet();
    if (pm) rc->live_ = rc->live_ | pm->root_ops();
    if (bpm) rc->live_ = rc->live_ | bpm->root_ops();
  }
  rc->start();
  UOp out = opts.walk ? rc->walk_rewrite(sink) : rc->unified_rewrite(sink);
  if (opts.simplify_memo && !rc->saw_opaque_call) {
    // every node's replacement is its own rewrite's result (a pure matcher), and a fixed point
    rc->for_each_replace([&](detail::UOpNode* k, detail::UOpNode* v) {
      detail::set_cached_simplify(k, k == v ? UOp() : RewriteContext::view(v));
      if (k != v) detail::set_cached_simplify(v, UOp());
    });
  }
  if (opts.memo) {
    rc->for_each_replace([&](detail::UOpNode* k, detail::UOpNode* v) {
      if (auto [slot, added] = opts.memo->emplace(RewriteContext::view(k)); added) *slot = RewriteContext::view(v);
    });
  }
  step.done(out);
  return out;
}

}  // namespace

size_t detail::rewrite_unclaimed_nodes() { return t_unclaimed; }

UOp graph_rewrite(const UOp& sink, const PatternMatcher& pm, const RewriteOpts& opts, std::source_location loc) {
  if (opts.bottom_up) return run(sink, nullptr, &pm, opts, loc);
  return run(sink, &pm, opts.bpm, opts, loc);
}

UOp graph_rewrite_bpm(const UOp& sink, const PatternMatcher* pm, const PatternMatcher& bpm, const RewriteOpts& opts,
                      std::source_location loc) {
  return run(sink, pm, &bpm, opts, loc);
}

}  // namespace tg

namespace tg {

// _substitute: every node found in ctx is replaced (bottom-up)
const PatternMatcher& pm_substitute() {
  static const PatternMatcher pm("_substitute", {
                                                    TG_RULE(UPat(GroupOp::all()).named("x"),
                                                            [](UOpMap<UOp>& ctx, U x) {
                                                              auto it = ctx.find(x);
                                                              return it == ctx.end() ? UOp() : it->second;
                                                            }),
                                                });
  return pm;
}

// (extra_pm + _substitute), built once per extra matcher like the reference's memoized PatternMatcher.__add__
static const PatternMatcher& with_substitute(const PatternMatcher* extra) {
  static std::mutex mu;
  static std::unordered_map<const PatternMatcher*, std::unique_ptr<PatternMatcher>> cache;
  std::lock_guard<std::mutex> lk(mu);
  auto& slot = cache[extra];
  if (!slot) slot = std::make_unique<PatternMatcher>(*extra + pm_substitute());
  return *slot;
}

namespace {
// The untracked substitute without the pattern machinery: the same walk as the bottom-up graph_rewrite with
// _substitute (a node goes to its fixed point in the map, then its srcs; a node rebuilt over new srcs is substituted
// again), memoized per node. It gives up (nullopt: the caller runs graph_rewrite) on what the driver handles
// specially: a FUNCTION or CALL body it must not enter, a cycle in the map, a node that waits on itself.
struct FastSubstitute {
  struct Frame {
    detail::UOpNode *n, *f, *rb;
    int stage;
  };
  std::vector<std::pair<detail::UOpNode*, detail::UOpNode*>> small;  // the map when it is small: a linear scan
  const UOpMap<UOp>* d = nullptr;
  BorrowedNodeMap<detail::UOpNode*> memo{16};
  ClearableRawNodeSet in_progress{16};
  PodStack<Frame> stack;
  std::vector<UOp> keep;  // rebuilt nodes (the memo borrows)
  std::vector<detail::UOpNode*> srcs;
  bool busy = false;
  OpSet key_ops;  // the keys' ops: a node whose slice has none of them is its own replacement, and is not walked

  bool untouched(const detail::UOpNode* x) const { return (x->slice_ops & key_ops).empty(); }
  // x's replacement: memoized, or x itself when untouched
  detail::UOpNode* resolved(detail::UOpNode* x) { return untouched(x) ? x : *memo.find(x); }
  detail::UOpNode* lookup(detail::UOpNode* x) const {
    if (!key_ops.has(x->op)) return nullptr;
    if (d == nullptr) {
      for (const auto& [k, v] : small)
        if (k == x) return v;
      return nullptr;
    }
    auto it = d->find(RewriteContext::view(x));
    return it == d->end() ? nullptr : it->second.node();
  }
  static bool opaque(detail::UOpNode* n) { return is_opaque_call(RewriteContext::view(n)); }
  TG_HOT_INLINE void push(detail::UOpNode* n) {
    Frame& f = stack.push();
    f.n = n, f.f = nullptr, f.rb = nullptr, f.stage = 0;
  }

  std::optional<UOp> run(const UOp& root, const UOpMap<UOp>& dmap, bool walk, bool enter_calls) {
    d = nullptr, small.clear(), key_ops = OpSet();
    if (dmap.size() <= 8)
      for (const auto& [k, v] : dmap) small.push_back({k.node(), v.node()});
    else
      d = &dmap;
    for (const auto& [k, v] : dmap) key_ops.add(k.op());
    if (untouched(root.node())) return root;
    struct Clear {
      FastSubstitute& s;
      ~Clear() { s.memo.clear(), s.in_progress.clear(), s.stack.clear(), s.keep.clear(), s.small.clear(); }
    } clear{*this};
    push(root.node());
    while (!stack.empty()) {
      Frame& fr = stack.back();
      if (fr.stage == 0) {
        if (memo.find(fr.n)) {
          stack.pop_back();
          continue;
        }
        if (!in_progress.insert(fr.n)) return std::nullopt;  // waits on itself
        detail::UOpNode* f = fr.n;
        if (walk) {
          if (detail::UOpNode* r = lookup(f)) {  // one substitution, not rewritten further
            *memo.emplace(RewriteContext::view(fr.n)).first = r;
            stack.pop_back();
            continue;
          }
        } else {
          int steps = 0;
          while (detail::UOpNode* r = lookup(f)) {
            if (++steps > (int)small.size() + (d ? (int)d->size() : 0)) return std::nullopt;  // a cycle
            f = r;
          }
        }
        if (!enter_calls && opaque(f)) return std::nullopt;
        fr.f = f, fr.stage = 1;
        for (uint32_t i = f->nsrc; i > 0; i--) {
          detail::UOpNode* x = f->srcs[i - 1];
          if (untouched(x) || memo.find(x)) continue;
          if (in_progress.contains(x)) return std::nullopt;
          push(x);  // fr is invalid from here
        }
      } else if (fr.stage == 1) {
        detail::UOpNode* f = fr.f;
        srcs.clear();
        bool same = true;
        for (uint32_t i = 0; i < f->nsrc; i++) {
          detail::UOpNode* r = resolved(f->srcs[i]);
          srcs.push_back(r);
          same = same && r == f->srcs[i];
        }
        if (same) {
          *memo.emplace(RewriteContext::view(fr.n)).first = f;
          stack.pop_back();
          continue;
        }
        keep.push_back(rebuild(RewriteContext::view(f), RewriteContext::view(srcs)));
        detail::UOpNode* rb = keep.back().node();
        if (walk || untouched(rb)) {
          *memo.emplace(RewriteContext::view(fr.n)).first = rb;
          stack.pop_back();
          continue;
        }
        if (detail::UOpNode** r = memo.find(rb)) {
          detail::UOpNode* v = *r;
          *memo.emplace(RewriteContext::view(fr.n)).first = v;
          stack.pop_back();
          continue;
        }
        if (in_progress.contains(rb)) return std::nullopt;
        fr.rb = rb, fr.stage = 2;
        push(rb);
      } else {
        detail::UOpNode* v = *memo.find(fr.rb);
        *memo.emplace(RewriteContext::view(fr.n)).first = v;
        stack.pop_back();
      }
    }
    return UOp(RewriteContext::view(resolved(root.node())));
  }
};
}  // namespace

UOp UOp::substitute(const std::vector<std::pair<UOp, UOp>>& dvars, const char* name, bool walk, bool enter_calls,
                    const PatternMatcher* extra_pm) const {
  UOpMap<UOp> d;
  for (const auto& [k, v] : dvars) {
    if (k == v)
      d.erase(k);
    else
      d[k] = v;
  }
  if (d.empty()) return *this;
  // nothing observes a substitute's matches unless they are counted (a name is seen only by a trace, which needs
  // TRACK_MATCH_STATS>=2): take the direct walk
  if (extra_pm == nullptr && TRACK_MATCH_STATS.value() == 0) {
    thread_local FastSubstitute fast;
    if (!fast.busy) {
      fast.busy = true;
      std::optional<UOp> r;
      try {
        r = fast.run(*this, d, walk, enter_calls);
      } catch (...) {
        fast.busy = false;
        throw;
      }
      fast.busy = false;
      if (r) return *r;
    }
  }
  const PatternMatcher& pm = extra_pm ? with_substitute(extra_pm) : pm_substitute();
  RewriteOpts opts{.ctx = &d, .bottom_up = true, .name = name, .walk = walk, .enter_calls = enter_calls};
  if (name == nullptr) {
    track::Untracked untracked;
    return graph_rewrite(*this, pm, opts);
  }
  return graph_rewrite(*this, pm, opts);
}

}  // namespace tg
