// The node store: the intern table, node lifetime (release, live counts), the small constants' table and node caches
// (see node_store.h), and UOp's constructor, which interns.
#include "lib/uop/node_store.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <unordered_set>
#ifdef __linux__
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "lib/helpers.h"
#include "lib/uop/nodemap.h"

namespace tg {

// ************************* one thread or several *************************

namespace detail {

// The owner (the first thread to use a UOp) runs NodeOps plain while g_uop_sharers is 0. Any other thread that uses
// a UOp counts itself in g_uop_sharers for good (claim_uop_role), and the worker pool counts each of its parallel
// sections while the section runs. The owner's later operations see the count and use atomics; an operation it began
// before it could see the count may still be running plain, so whoever raises the count waits it out. The owner
// publishes its operation depth (g_owner_busy) and then reads the count, with no fence between; the other thread
// raises the count, makes every thread of the process execute a full barrier (membarrier(2),
// MEMBARRIER_CMD_PRIVATE_EXPEDITED), then waits until the depth is 0: an owner operation that read the count before
// that barrier had published its depth before it too (the asymmetric Dekker pattern of RCU and biased locking).
// Without membarrier no thread becomes the owner: every operation is atomic.
std::atomic<uint32_t> g_uop_sharers{0};
std::atomic<uint32_t> g_owner_busy{0};

namespace {
std::atomic<bool> g_owner_taken{false};
bool membarrier_ready() {
  static const bool ok = [] {
#if defined(__linux__)
    if (std::getenv("TG_UOP_ATOMIC")) return false;  // every operation atomic (to compare, or to rule this out)
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
    return false;
#endif
  }();
  return ok;
}
// called once this thread is counted in g_uop_sharers: the owner's operations that may still run plain have ended
void wait_out_owner() {
  // seq_cst with the count's increment and the owner's claim: either this thread sees the claim, or the new owner's
  // first operation sees the count
  if (!membarrier_ready() || !g_owner_taken.load(std::memory_order_seq_cst)) return;
#if defined(__linux__)
  // a process made by fork() starts unregistered (fork_child registers it again; this is the fallback)
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0 &&
      (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0 ||
       syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)) {
    std::fprintf(stderr, "tinygrad: membarrier failed after it was registered\n");
    std::abort();
  }
#endif
  for (int spins = 0; g_owner_busy.load(std::memory_order_acquire) != 0;)
    if (++spins > 64) std::this_thread::yield();
}
// the worker pool (parallel_for): its workers use UOps only inside its sections, which count as sharers
void section_begin() {
  g_uop_sharers.fetch_add(1, std::memory_order_seq_cst);
  if (t_uop_role != 1) wait_out_owner();  // the owner itself is between operations here
}
void section_end() { g_uop_sharers.fetch_sub(1, std::memory_order_release); }
void worker_start() { t_uop_role = 2; }
// the child of fork() has one thread, the one that forked: it owns UOps there (its parent's other threads, and the
// counts they made, do not exist in it), and the child's membarrier registration is its own
void fork_child() {
  if (!membarrier_ready()) return;
#if defined(__linux__)
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) return;
#endif
  g_owner_taken.store(true, std::memory_order_relaxed);
  g_uop_sharers.store(0, std::memory_order_relaxed);
  g_owner_busy.store(0, std::memory_order_relaxed);
  t_uop_role = 1;
}
const bool g_hooks_set = [] {
  parallel_hooks() = {section_begin, section_end, worker_start};
#if defined(__linux__)
  pthread_atfork(nullptr, nullptr, fork_child);
#endif
  return true;
}();
}  // namespace

void claim_uop_role() {
  bool none = false;
  if (membarrier_ready() && g_owner_taken.compare_exchange_strong(none, true, std::memory_order_seq_cst)) {
    std::atomic_thread_fence(std::memory_order_seq_cst);  // before this thread's first read of the count
    t_uop_role = 1;
    return;
  }
  // for the rest of the process: a count left when the thread ends could let the owner run plain while this thread's
  // thread_local UOps are still being destroyed
  t_uop_role = 2;
  g_uop_sharers.fetch_add(1, std::memory_order_seq_cst);
  wait_out_owner();
}

}  // namespace detail

// ************************* interning *************************

namespace detail {

namespace {

// The intern table: buckets of chained nodes (UOpNode::next), each bucket a word holding its first node, that
// node's hash tag, and a lock bit. Interning or releasing a node locks its bucket only: two threads write the same
// line only when their nodes hash to neighbouring buckets, not on every operation as a shared lock would make them
// (a line written by the other core costs a transfer between the cores, up to ~200 ns where they share no cache).
// A word: [16-bit tag: the top bits of the node's hash][pointer, 8-byte aligned][kMoved][kLock]. A probe compares
// tags before it touches a node. Growing moves every chain into a table twice the size: it locks and marks each old
// bucket moved (an operation finding a moved bucket waits for the new table), then publishes the new table. Old
// tables are left allocated (a thread may still read a moved word); together they are smaller than the live one.
constexpr uintptr_t kLock = 1, kMoved = 2, kTagMask = ~((uintptr_t(1) << 48) - 1), kPtrMask = ~kTagMask & ~uintptr_t(7);
struct Table {
  size_t mask;
  std::atomic<uintptr_t>* buckets;
  explicit Table(size_t n) : mask(n - 1), buckets(new std::atomic<uintptr_t>[n]) {
    for (size_t i = 0; i < n; i++) buckets[i].store(0, std::memory_order_relaxed);
  }
};
std::atomic<Table*> g_table{new Table(size_t(1) << 12)};
inline UOpNode* node_of(uintptr_t w) { return reinterpret_cast<UOpNode*>(w & kPtrMask); }
inline uintptr_t tag_of(size_t hash) { return hash & kTagMask; }
inline uintptr_t word_of(UOpNode* n) {
  auto p = reinterpret_cast<uintptr_t>(n);
  if (p & ~kPtrMask) [[unlikely]] {
    std::fprintf(stderr, "tinygrad: a node's address %p does not fit the intern table's 48-bit pointers\n", (void*)n);
    std::abort();
  }
  return p | tag_of(n->hash);
}
// the bucket of hash h, locked; head: its word without the lock bit. Waits out a growth. plain: no other thread
// uses UOps (NodeOp), the lock bit is set by a plain store. The waits live apart (lock_bucket_wait): the usual
// case, a free bucket, is a few inlined instructions instead of a call that saves and restores the waits' registers
__attribute__((noinline)) std::atomic<uintptr_t>& lock_bucket_wait(size_t h, uintptr_t& head, bool plain) {
  for (int spins = 0;;) {
    Table* t = g_table.load(std::memory_order_acquire);
    std::atomic<uintptr_t>& b = t->buckets[h & t->mask];
    uintptr_t w = b.load(std::memory_order_relaxed);
    while (!(w & kMoved)) {
      if (plain && !(w & kLock)) {
        b.store(w | kLock, std::memory_order_relaxed);
        head = w;
        return b;
      }
      if (!(w & kLock) && b.compare_exchange_weak(w, w | kLock, std::memory_order_acquire, std::memory_order_relaxed)) {
        head = w;
        return b;
      }
      if (++spins > 64) std::this_thread::yield();
#if defined(__x86_64__) || defined(__i386__)
      else
        __builtin_ia32_pause();
#endif
      w = b.load(std::memory_order_relaxed);
    }
    while (g_table.load(std::memory_order_acquire) == t) std::this_thread::yield();  // the new table is coming
  }
}
TG_HOT_INLINE std::atomic<uintptr_t>& lock_bucket(size_t h, uintptr_t& head, bool plain) {
  Table* t = g_table.load(std::memory_order_acquire);
  std::atomic<uintptr_t>& b = t->buckets[h & t->mask];
  const uintptr_t w = b.load(std::memory_order_relaxed);
  if (plain && !(w & (kLock | kMoved))) {
    b.store(w | kLock, std::memory_order_relaxed);
    head = w;
    return b;
  }
  return lock_bucket_wait(h, head, plain);
}
// A thread's private table (PrivateNodes): the same buckets, touched by that thread alone, so no lock bit. It grows
// like the shared one, and its small constants are its own.
constexpr pyint kSmallLo = -32, kSmallHi = 1024;
struct PrivateStore {
  Table* table = new Table(size_t(1) << 12);
  int64_t live = 0;  // nodes linked in table
  UOpNode* weakint[kSmallHi - kSmallLo] = {};
  UOpNode* int32[kSmallHi - kSmallLo] = {};
};
thread_local PrivateStore* t_private = nullptr;
thread_local uint8_t t_saved_role = 0;  // the role a PrivateNodes scope replaced
PrivateStore& private_store() {
  if (!t_private) [[unlikely]]
    t_private = new PrivateStore();  // kept for the thread's life (its small constants stay referenced)
  return *t_private;
}
std::atomic<uintptr_t>& private_bucket(size_t h, uintptr_t& head) {
  std::atomic<uintptr_t>& b = t_private->table->buckets[h & t_private->table->mask];
  head = b.load(std::memory_order_relaxed);
  return b;
}
void grow_private() {
  Table* t = t_private->table;
  size_t n = t->mask + 1;
  Table* nt = nullptr;
  try {
    nt = new Table(2 * n);
  } catch (const std::bad_alloc&) {
    return;
  }
  for (size_t i = 0; i < n; i++) {
    for (uintptr_t w = t->buckets[i].load(std::memory_order_relaxed), next; node_of(w); w = next) {
      UOpNode* node = node_of(w);
      next = node->next;
      std::atomic<uintptr_t>& nb = nt->buckets[node->hash & nt->mask];
      node->next = nb.load(std::memory_order_relaxed);
      nb.store(word_of(node), std::memory_order_relaxed);
    }
  }
  delete[] t->buckets;
  delete t;
  t_private->table = nt;
}
// unlinks n from the chain whose bucket b (locked, or private) held head; gives the bucket back
void unlink(std::atomic<uintptr_t>& b, uintptr_t head, UOpNode* n) {
  if (node_of(head) == n) {
    b.store(n->next, std::memory_order_release);
    return;
  }
  for (UOpNode* p = node_of(head); p; p = node_of(p->next)) {
    if (node_of(p->next) == n) {
      p->next = n->next;
      break;
    }
  }
  b.store(head, std::memory_order_release);
}

// the live node count: one counter per thread that ever made or freed a node, written by its thread alone (a plain
// store, no shared line); the sum is exact while no thread changes it. Counters outlive their threads.
struct alignas(64) LiveCounter {
  std::atomic<int64_t> n{0};
  uint32_t made = 0;  // nodes made by this thread, modulo: when to look at the table's load
};
std::mutex& counters_mu() {
  static auto* mu = new std::mutex();
  return *mu;
}
std::vector<LiveCounter*>& counters() {
  static auto* v = new std::vector<LiveCounter*>();
  return *v;
}
thread_local LiveCounter* t_counter = nullptr;
__attribute__((noinline)) LiveCounter* new_counter() {
  auto* c = new LiveCounter();
  std::lock_guard<std::mutex> lk(counters_mu());
  counters().push_back(c);
  return c;
}
TG_HOT_INLINE LiveCounter& my_counter() {
  if (!t_counter) [[unlikely]]
    t_counter = new_counter();
  return *t_counter;
}
int64_t live_nodes() {
  std::lock_guard<std::mutex> lk(counters_mu());
  int64_t n = 0;
  for (LiveCounter* c : counters()) n += c->n.load(std::memory_order_relaxed);
  return n;
}
// double the table when it holds more nodes than buckets (looked at every 1024 nodes a thread makes)
void maybe_grow() {
  static std::mutex grow_mu;
  std::unique_lock<std::mutex> lk(grow_mu, std::try_to_lock);
  if (!lk.owns_lock()) return;  // another thread grows it
  Table* t = g_table.load(std::memory_order_acquire);
  size_t n = t->mask + 1;
  if (live_nodes() <= (int64_t)n) return;
  Table* nt = nullptr;
  try {
    nt = new Table(2 * n);
  } catch (const std::bad_alloc&) {
    return;  // growing is optional: the chains just get longer
  }
  for (size_t i = 0; i < n; i++) {
    uintptr_t head;
    std::atomic<uintptr_t>& b = t->buckets[i];
    for (uintptr_t w = b.load(std::memory_order_relaxed);;) {
      if (!(w & kLock) && b.compare_exchange_weak(w, w | kLock, std::memory_order_acquire, std::memory_order_relaxed)) {
        head = w;
        break;
      }
      std::this_thread::yield();
      w = b.load(std::memory_order_relaxed);
    }
    for (uintptr_t w = head, next; node_of(w); w = next) {
      UOpNode* node = node_of(w);
      next = node->next;
      std::atomic<uintptr_t>& nb = nt->buckets[node->hash & nt->mask];
      node->next = nb.load(std::memory_order_relaxed);
      nb.store(word_of(node), std::memory_order_relaxed);
    }
    b.store(kMoved, std::memory_order_release);
  }
  g_table.store(nt, std::memory_order_release);
}
SpinLock g_cache_mu[64];

// a field into the node's hash: a multiply per field (fmix below spreads every bit at the end)
inline size_t mix(size_t h, size_t v) { return (h ^ v) * 0xbf58476d1ce4e5b9ull; }
// murmur3's finalizer: every input bit reaches the low bits (slot) and the high bits (shard)
inline size_t fmix(size_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

bool try_inc(UOpNode* n, bool plain) {
  if (!counted(n)) return true;
  uint32_t c = n->rc.load(std::memory_order_relaxed);
  if (plain) {
    if (c == 0) return false;
    n->rc.store(c + 1, std::memory_order_relaxed);
    return true;
  }
  while (c != 0)
    if (n->rc.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) return true;
  return false;
}

// the nodes left to release, last in first out: the first 32 inline (a release usually frees a few nodes; no
// allocation per release)
struct ReleaseStack {
  UOpNode* inline_[32];
  size_t n = 0;
  std::vector<UOpNode*> more;  // used only while inline_ is full, so its entries are the latest
  void push(UOpNode* x) {
    if (n < 32)
      inline_[n++] = x;
    else
      more.push_back(x);
  }
  bool empty() const { return n == 0 && more.empty(); }
  UOpNode* pop() {
    if (!more.empty()) {
      UOpNode* x = more.back();
      more.pop_back();
      return x;
    }
    return inline_[--n];
  }
};
thread_local ReleaseStack* tl_release_stack = nullptr;

// Node memory: freed nodes of up to kPooledSrcs srcs are kept by the freeing thread, per src count, and reused by its
// next nodes of that count (a push and a pop instead of the allocator's calls; a codegen makes and frees ~16k nodes
// per pass). A thread keeps at most kPoolCap per count (~2.4 MB in all); the rest go back to the allocator, and so
// does all of it when the thread ends (nodes freed after that, by the thread's last destructors, go straight back).
constexpr uint32_t kPooledSrcs = 4;
constexpr size_t kPoolCap = 2048;
struct NodePool {
  struct Free {
    Free* next;
  };
  Free* head[kPooledSrcs + 1] = {};
  size_t n[kPooledSrcs + 1] = {};
  bool ended = false;
  ~NodePool() {
    for (uint32_t k = 0; k <= kPooledSrcs; k++)
      while (Free* f = head[k]) head[k] = f->next, ::operator delete(f);
    ended = true;
  }
};
thread_local NodePool t_pool;
size_t node_bytes(size_t nsrc) { return sizeof(UOpNode) + nsrc * sizeof(UOpNode*); }
void* alloc_node(size_t nsrc) {
  if (nsrc <= kPooledSrcs) {
    NodePool& p = t_pool;
    if (NodePool::Free* f = p.head[nsrc]) {
      p.head[nsrc] = f->next, p.n[nsrc]--;
      return f;
    }
  }
  return ::operator new(node_bytes(nsrc));
}
void free_node(void* mem, size_t nsrc) {
  if (nsrc <= kPooledSrcs) {
    NodePool& p = t_pool;
    if (p.n[nsrc] < kPoolCap && !p.ended) {
      auto* f = static_cast<NodePool::Free*>(mem);
      f->next = p.head[nsrc], p.head[nsrc] = f, p.n[nsrc]++;
      return;
    }
  }
  ::operator delete(mem);
}
}  // namespace

// Cache memory, pooled like the nodes' (a codegen pass makes and frees ~5k caches: their shapes, bounds, ranges)
namespace {
constexpr size_t kCachePoolCap = 4096;
struct CachePool {
  struct Free {
    Free* next;
  };
  Free* head = nullptr;
  size_t n = 0;
  bool ended = false;
  ~CachePool() {
    while (Free* f = head) head = f->next, ::operator delete(f);
    ended = true;
  }
};
thread_local CachePool t_cache_pool;
UOpCache* make_cache() {
  CachePool& p = t_cache_pool;
  void* mem;
  if (CachePool::Free* f = p.head) {
    p.head = f->next, p.n--;
    mem = f;
  } else {
    mem = ::operator new(sizeof(UOpCache));
  }
  return new (mem) UOpCache();
}
}  // namespace

void free_cache(UOpCache* c) {
  if (!c) return;
  c->~UOpCache();
  CachePool& p = t_cache_pool;
  if (p.n < kCachePoolCap && !p.ended) {
    auto* f = reinterpret_cast<CachePool::Free*>(c);
    f->next = p.head, p.head = f, p.n++;
    return;
  }
  ::operator delete(c);
}

void destroy_cache(UOpNode* n) { free_cache(n->cache.load(std::memory_order_acquire)); }

void release_node(UOpNode* first) {
  // iterative: a long chain of nodes must not recurse. Nested calls (from cache contents) join the outer loop.
  if (tl_release_stack != nullptr) {
    tl_release_stack->push(first);
    return;
  }
  ReleaseStack stack;
  stack.push(first);
  tl_release_stack = &stack;
  NodeOp op;
  while (!stack.empty()) {
    UOpNode* n = stack.pop();
    {  // unlink n from its chain (an orphan is in none)
      const uint8_t fl = n->flags.load(std::memory_order_relaxed);
      uintptr_t head;
      if (fl & kPrivate) {
#ifdef TG_CHECK_PRIVATE
        check_private(n);  // freed by its own thread
        private_gone(n);
#endif
        std::atomic<uintptr_t>& b = private_bucket(n->hash, head);
        unlink(b, head, n);
        t_private->live--;
      } else if (!(fl & kOrphan)) {
        std::atomic<uintptr_t>& b = lock_bucket(n->hash, head, op.plain());
        unlink(b, head, n);
      }
      LiveCounter& c = my_counter();
      c.n.store(c.n.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    }
    for (uint32_t i = 0; i < n->nsrc; i++) {
      UOpNode* c = n->srcs[i];
      if (counted(c) && rc_dec(c->rc, op.plain()) == 1) stack.push(c);
    }
    destroy_cache(n);
    n->arg.~Arg();
    n->tag.~Arg();
    n->cache.~atomic();
    n->trace_id.~atomic();
    n->rw_slot.~atomic();
    n->rc.~atomic();
    n->flags.~atomic();
    free_node(n, n->nsrc);
  }
  tl_release_stack = nullptr;
}

// the number of dims of n's shape when it is known without computing anything, else -1: born scalar, a buffer of one
// dim (its size an int CONST, or after codegen's casted consts an int CAST of one), a shape computed already, or
// through AFTER and LOAD (which have their src's shape) one of those. What compute_shape in uop.cpp would give
static int known_ndim(const UOpNode* n) {
  for (int hops = 0; hops < 8; hops++) {
    if (n->flags.load(std::memory_order_relaxed) & kScalarShape) return 0;
    if ((n->op == Ops::PARAM || n->op == Ops::BUFFER) && n->nsrc >= 1) {
      const UOpNode* sz = n->srcs[0];
      if (sz->op == Ops::CAST && sz->nsrc == 1 && dtypes::is_int(sz->dtype)) sz = sz->srcs[0];
      if (sz->op == Ops::CONST && sz->arg.kind() == Arg::Kind::Int) return 1;
    }
    const UOpCache* c = n->cache.load(std::memory_order_acquire);
    if (c && c->shape_done.load(std::memory_order_acquire)) return c->shape ? (int)c->shape->size() : -1;
    if ((n->op != Ops::AFTER && n->op != Ops::LOAD) || n->nsrc < 1) return -1;
    n = n->srcs[0];
  }
  return -1;
}

// Whether a new node's shape is () by what its srcs already say, without computing anything (the value
// compute_shape in uop.cpp would give, only for the cases where it cannot throw): the scalar ops, and elementwise and
// pass-through ops over scalar srcs. Every scalar node of a kernel after devectorizing is born knowing it, so asking
// its shape (the elementwise rules ask of every node) walks nothing. Other nodes compute their shape when asked.
static bool scalar_at_birth(Ops op, UOpNode* const* srcs, uint32_t nsrc) {
  auto scalar = [](const UOpNode* x) { return (x->flags.load(std::memory_order_relaxed) & kScalarShape) != 0; };
  switch (op) {
    case Ops::CONST:
    case Ops::GETADDR:
    case Ops::RANGE:
    case Ops::SPECIAL:
      return true;
    case Ops::AFTER:
    case Ops::LOAD:
    case Ops::STORE:
    case Ops::END:
    case Ops::CONTIGUOUS:
    case Ops::DETACH:
    case Ops::CAST:
      return nsrc >= 1 && scalar(srcs[0]);
    case Ops::INDEX: {  // shape: the indices' shapes, then the indexed shape's dims past them
      if (nsrc < 1) return false;
      for (uint32_t i = 1; i < nsrc; i++)
        if (!scalar(srcs[i])) return false;
      const int nd = known_ndim(srcs[0]);
      return nd >= 0 && nd <= (int)nsrc - 1;
    }
    default:
      break;
  }
  if (GroupOp::Unary.has(op)) return nsrc == 1 && scalar(srcs[0]);
  if (GroupOp::Broadcastable.has(op)) {
    if (nsrc == 0) return false;
    for (uint32_t i = 0; i < nsrc; i++)
      if (!scalar(srcs[i])) return false;
    return true;
  }
  return false;
}

static UOpNode* intern(Ops op, DType dtype, std::span<const UOp> src, Arg&& arg, Arg&& tag, bool* created) {
  size_t h = mix(mix(mix((size_t)op, (size_t)dtype.data()), arg.hash()), tag.hash() + 0x7f);
  for (const UOp& s : src) h = mix(h, s.ptr_hash());
  h = fmix(h);
  NodeOp nop;
  uintptr_t head;
  const bool priv = t_uop_role == 3;
  std::atomic<uintptr_t>& b = priv ? private_bucket(h, head) : lock_bucket(h, head, nop.plain());
  struct Unlock {  // if making the node throws (no memory), the bucket is given back as it was
    std::atomic<uintptr_t>& b;
    const uintptr_t& head;
    bool armed = true;
    ~Unlock() {
      if (armed) b.store(head, std::memory_order_release);
    }
  } unlock{b, head};
  const uintptr_t htag = tag_of(h);
  for (uintptr_t w = head; node_of(w); w = node_of(w)->next) {
    if ((w & kTagMask) != htag) continue;
    UOpNode* n = node_of(w);
    if (n->hash != h || n->op != op || n->dtype != dtype || n->nsrc != src.size()) continue;
    bool eq = true;
    for (size_t k = 0; k < src.size() && eq; k++) eq = n->srcs[k] == src[k].node();
    if (!eq || !n->arg.same(arg) || !n->tag.same(tag)) continue;
    if (try_inc(n, nop.plain())) {
      *created = false;
      return n;  // unlock gives the bucket back
    }
    // a dying node with the same key: it unlinks itself when its release gets here; a new node goes first
  }
  UOpNode* n = static_cast<UOpNode*>(alloc_node(src.size()));
  new (&n->rc) std::atomic<uint32_t>(1);
  n->op = op;
  new (&n->flags) std::atomic<uint8_t>(0);
  n->nsrc = (uint32_t)src.size();
  n->dtype = dtype;
  n->hash = h;
  new (&n->arg) Arg(std::move(arg));
  new (&n->tag) Arg(std::move(tag));
  OpSet so, sl(op);
  uint8_t fl = priv ? kPrivate : 0;
  uint64_t b1 = below_bit(n);
  for (size_t k = 0; k < src.size(); k++) {
    n->srcs[k] = src[k].node();
    if (counted(n->srcs[k])) {
      check_private(n->srcs[k]);
      rc_inc(n->srcs[k]->rc, nop.plain());
    }
    so.add(src[k].op());
    sl = sl | n->srcs[k]->slice_ops;
    fl |= n->srcs[k]->flags.load(std::memory_order_relaxed) & kSliceInvalid;
    b1 |= below_bit(n->srcs[k]);
  }
  n->below1 = b1;
  new (&n->src_ops) OpSet(so);
  new (&n->slice_ops) OpSet(sl);
  if (op == Ops::CONST && n->arg.is_invalid()) fl |= kSliceInvalid;
  if (scalar_at_birth(op, n->srcs, n->nsrc)) fl |= kScalarShape;
  if (fl) n->flags.store(fl, std::memory_order_relaxed);
  new (&n->cache) std::atomic<UOpCache*>(nullptr);
  new (&n->trace_id) std::atomic<uint64_t>(0);
  new (&n->rw_slot) std::atomic<uint64_t>(0);
  *created = true;
  n->next = head;
  unlock.armed = false;
  b.store(word_of(n), std::memory_order_release);  // links n and unlocks the bucket
  LiveCounter& c = my_counter();
  c.n.store(c.n.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (priv) {
#ifdef TG_CHECK_PRIVATE
    private_made(n);
#endif
    if (++t_private->live > (int64_t)t_private->table->mask + 1) [[unlikely]]
      grow_private();
  } else if ((++c.made & 1023) == 0) [[unlikely]] {
    maybe_grow();
  }
  return n;
}

__attribute__((noinline)) UOpCache* new_cache_of(UOpNode* n) {
  UOpCache* c = nullptr;
  UOpCache* fresh = make_cache();
  NodeOp op;
  if (op.plain()) {
    n->cache.store(fresh, std::memory_order_release);
    return fresh;
  }
  if (n->cache.compare_exchange_strong(c, fresh, std::memory_order_acq_rel)) return fresh;
  free_cache(fresh);
  return c;
}
SpinLock& cache_mutex(UOpNode* n) { return g_cache_mu[(n->hash >> 7) & 63]; }

bool cached_simplify(UOpNode* n, UOp& out) {
  UOpCache* c = n->cache.load(std::memory_order_acquire);
  if (!c || !c->simp_done.load(std::memory_order_acquire)) return false;
  out = c->simp;
  return true;
}
void set_cached_simplify(UOpNode* n, const UOp& r) {
  UOpCache* c = cache_of(n);
  CacheLock lk(n);
  if (c->simp_done.load(std::memory_order_relaxed)) return;
  c->simp = r;
  c->simp_done.store(true, std::memory_order_release);
}

}  // namespace detail

// Small integer constants of the two index dtypes, the consts codegen makes most (13,000 per MLP codegen, one node
// each time): a table takes one reference to each the first time it is made and keeps it for the process, so making
// it again is a load, not an interning. live_uop_count leaves them out.
namespace {
using detail::kSmallHi;
using detail::kSmallLo;
struct SmallConsts {
  std::atomic<detail::UOpNode*> weakint[kSmallHi - kSmallLo]{}, int32[kSmallHi - kSmallLo]{};
  std::atomic<size_t> kept{0};
};
SmallConsts& small_consts() {
  static auto* t = new SmallConsts();  // never destroyed: its nodes stay
  return *t;
}
}  // namespace

UOp detail::small_int_const(DType dtype, pyint v) {
  if (v < kSmallLo || v >= kSmallHi || (dtype != dtypes::weakint && dtype != dtypes::int32)) return UOp();
  SmallConsts& t = small_consts();
  if (t_uop_role == 3) {  // this thread's own (PrivateNodes)
    detail::PrivateStore& ps = detail::private_store();
    UOpNode*& slot = (dtype == dtypes::weakint ? ps.weakint : ps.int32)[(size_t)(v - kSmallLo)];
    if (slot) return UOp::from_node(slot);
    UOp u(Ops::CONST, dtype, std::span<const UOp>{}, Arg(dtype.const_(PyConst(v))));
    slot = u.node();
    if (detail::counted(slot)) {
      slot->rc.store(slot->rc.load(std::memory_order_relaxed) + (1u << 30), std::memory_order_relaxed);
      slot->flags.store(slot->flags.load(std::memory_order_relaxed) | kImmortal, std::memory_order_relaxed);
      t.kept.fetch_add(1, std::memory_order_relaxed);
    }
    return u;
  }
  std::atomic<UOpNode*>& slot = (dtype == dtypes::weakint ? t.weakint : t.int32)[(size_t)(v - kSmallLo)];
  if (UOpNode* n = slot.load(std::memory_order_acquire)) return UOp::from_node(n);
  UOp u(Ops::CONST, dtype, std::span<const UOp>{}, Arg(dtype.const_(PyConst(v))));
  UOpNode* none = nullptr;
  if (slot.compare_exchange_strong(none, u.node(), std::memory_order_acq_rel)) {
    new UOp(u);  // the table's reference, never released: from now on no count is kept
    // a thread that does not see the flag yet may still count; the margin keeps such counts from ever reaching 0
    u.node()->rc.fetch_add(1u << 30, std::memory_order_relaxed);
    u.node()->flags.fetch_or(kImmortal, std::memory_order_release);
    t.kept.fetch_add(1, std::memory_order_relaxed);
  }
  return u;
}

size_t live_uop_count() {
  int64_t n = detail::live_nodes() - (int64_t)small_consts().kept.load(std::memory_order_relaxed);
  return (size_t)std::max<int64_t>(0, n);
}

// ************************* private nodes *************************

namespace {
std::vector<void (*)()>& private_caches() {
  static auto* v = new std::vector<void (*)()>();
  return *v;
}
#ifdef TG_CHECK_PRIVATE
thread_local std::unordered_set<const detail::UOpNode*>* t_mine = nullptr;  // this thread's private nodes
std::unordered_set<const detail::UOpNode*>& mine() {
  if (!t_mine) t_mine = new std::unordered_set<const detail::UOpNode*>();
  return *t_mine;
}
#endif
}  // namespace
std::mutex& private_caches_mu() {
  static auto* mu = new std::mutex();
  return *mu;
}
void register_private_cache(void (*clear)()) {
  std::lock_guard<std::mutex> lk(private_caches_mu());
  private_caches().push_back(clear);
}

#ifdef TG_CHECK_PRIVATE
void detail::private_violation(const UOpNode* n) {
  const bool priv = n->flags.load(std::memory_order_relaxed) & kPrivate, in_scope = t_uop_role == 3;
  if (priv == in_scope && (!priv || mine().count(n))) return;
  std::fprintf(stderr, "tinygrad: %s\n",
               in_scope ? (priv ? "a PrivateNodes scope touched another thread's private node"
                                : "a PrivateNodes scope touched a shared node")
                        : "a private node was touched outside its PrivateNodes scope");
  std::fprintf(stderr, "  %s %s\n", op_repr(n->op).c_str(), n->arg.repr().c_str());
  std::abort();
}
void detail::private_made(const UOpNode* n) { mine().insert(n); }
void detail::private_gone(const UOpNode* n) { mine().erase(n); }
#endif

PrivateNodes::PrivateNodes() {
  if (detail::t_uop_role == 3) throw Error("PrivateNodes: scopes do not nest");
  if (detail::t_uop_role == 0) detail::claim_uop_role();
  saved_role_ = detail::t_uop_role;
  detail::private_store();
  detail::t_saved_role = saved_role_;
  detail::t_uop_role = 3;
}
static void clear_private_caches() {
  std::lock_guard<std::mutex> lk(private_caches_mu());
  for (void (*clear)() : private_caches()) clear();
}
// the caches' private nodes go too (a scope left by an exception never reached adopt_private)
PrivateNodes::~PrivateNodes() {
  clear_private_caches();
  detail::t_uop_role = saved_role_;
}

UOp import_private(const UOp& root) {
  using detail::UOpNode;
  if (detail::t_uop_role != 3) throw Error("import_private: not in a PrivateNodes scope");
  if (!root) return UOp();
  // a depth-first walk that reads the shared nodes' fields and nothing else (no count, claim or cache of theirs)
  std::unordered_map<const UOpNode*, UOp> made;
  struct Frame {
    const UOpNode* n;
    uint32_t i;
  };
  std::vector<Frame> st{{root.node(), 0}};
  std::vector<UOp> src;
  while (!st.empty()) {
    Frame& f = st.back();
    if (f.i < f.n->nsrc) {
      const UOpNode* s = f.n->srcs[f.i++];
      if (!made.count(s)) st.push_back({s, 0});
      continue;
    }
    const UOpNode* n = f.n;
    st.pop_back();
    if (made.count(n)) continue;
    src.clear();
    for (uint32_t i = 0; i < n->nsrc; i++) src.push_back(made.at(n->srcs[i]));
    made.emplace(n, UOp(n->op, n->dtype, src, n->arg, n->tag));
  }
  return made.at(root.node());
}

UOp adopt_private(UOp root) {
  using detail::UOpNode;
  if (detail::t_uop_role != 3) throw Error("adopt_private: not in a PrivateNodes scope");
  clear_private_caches();
  // the private nodes reachable from root, through srcs and the UOps in args (each held by root's graph), marked
  // orphan as they are found; the lists are the thread's, reused
  thread_local std::vector<UOpNode*> todo, nodes;
  todo.clear(), nodes.clear();
  static void (*const visit)(UOpNode*) = [](UOpNode* n) {
    const uint8_t fl = n->flags.load(std::memory_order_relaxed);
    if ((fl & (detail::kPrivate | detail::kImmortal | detail::kOrphan)) != detail::kPrivate) return;
    n->flags.store(fl | detail::kOrphan, std::memory_order_relaxed);
    todo.push_back(n);
  };
  auto visit_arg = [](const Arg& a) {
    if (const ArgObj* o = a.obj()) o->for_each_uop([](const UOp& u, void*) { visit(u.node()); }, nullptr);
  };
  if (root) visit(root.node());
  while (!todo.empty()) {
    UOpNode* n = todo.back();
    todo.pop_back();
    nodes.push_back(n);
    for (uint32_t i = 0; i < n->nsrc; i++) visit(n->srcs[i]);
    visit_arg(n->arg), visit_arg(n->tag);
  }
  // private small constants become the shared ones (made with this thread's usual role); a kernel has a few
  std::vector<std::pair<UOpNode*, UOp>> shared;
  auto shared_of = [&](UOpNode* p) -> UOpNode* {
    for (const auto& [k, v] : shared)
      if (k == p) return v.node();
    detail::t_uop_role = detail::t_saved_role;
    UOp g = detail::small_int_const(p->dtype, p->arg.as_int());  // no throw: the value is in the table's range
    detail::t_uop_role = 3;
    shared.emplace_back(p, std::move(g));
    return shared.back().second.node();
  };
  for (UOpNode* n : nodes) {
    // the cache goes (memos only; what it holds may be private nodes no one else should see)
    detail::UOpCache* c = n->cache.load(std::memory_order_relaxed);
    n->cache.store(nullptr, std::memory_order_relaxed);
    detail::free_cache(c);
    for (uint32_t i = 0; i < n->nsrc; i++) {
      const uint8_t fl = n->srcs[i]->flags.load(std::memory_order_relaxed);
      if ((fl & detail::kPrivate) && (fl & detail::kImmortal)) n->srcs[i] = shared_of(n->srcs[i]);
    }
    // out of the private table, into none
    uintptr_t head;
    std::atomic<uintptr_t>& b = detail::private_bucket(n->hash, head);
    detail::unlink(b, head, n);
    detail::t_private->live--;
#ifdef TG_CHECK_PRIVATE
    detail::private_gone(n);
#endif
    n->flags.store(n->flags.load(std::memory_order_relaxed) & ~detail::kPrivate, std::memory_order_relaxed);
  }
  nodes.clear();
  return root;
}

void spec_check_created(const UOp& u);  // spec.cpp: SPEC>=2 verifies every new node

UOp::UOp(Ops op, DType dtype, std::span<const UOp> src, Arg arg, Arg tag) {
  if (!dtype) {
    dtype = dtype_from_uop(op, src, arg);
    if (!dtype) dtype = dtypes::void_;
  } else if (SPEC.value() == 2 && op != Ops::CONST) [[unlikely]] {
    // an explicit dtype must agree with the derived one
    DType expected = dtype_from_uop(op, src, arg);
    if (expected && expected != dtype)
      throw Error("bad dtype " + dtype.repr() + ", expected " + expected.repr() + " on " + op_repr(op));
  }
  bool created = false;
  n_ = detail::intern(op, dtype, src, std::move(arg), std::move(tag), &created);
  if (created && SPEC.value() > 1) [[unlikely]] {
    try {
      spec_check_created(*this);
    } catch (...) {
      dec();  // a constructor that throws never runs the destructor
      throw;
    }
  }
}

}  // namespace tg
