// The node store (internal to lib/uop): the intern table that makes every node unique, node lifetime (release, the
// live count), the table of small constants, and each node's lazily made cache of properties. node_store.cpp holds
// it, with the per-thread private tables of PrivateNodes scopes (uop.h) and the orphans they hand out; uop.cpp
// computes the cached properties.
#pragma once
#include <atomic>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "lib/uop/uop.h"

namespace tg::detail {

struct UOpCache {
  std::atomic<bool> mm_done{false};
  std::pair<PyConst, PyConst> mm;  // vmin, vmax
  std::atomic<bool> shape_done{false};
  std::optional<Shape> shape;
  std::atomic<bool> ranges_done{false};
  std::vector<UOp> ranges;  // _ranges (self excluded)
  std::atomic<bool> device_done{false};
  Arg device;
  std::atomic<bool> addrspace_done{false};
  std::optional<AddrSpace> addrspace;
  std::atomic<bool> simp_done{false};
  UOp simp;  // the untracked simplify() of the node; null: the node itself
};

// a lock for critical sections of a few dozen instructions (a probe of the intern table, a cache write): half the cost
// of an uncontended std::mutex; a waiter that spins long yields its core
class SpinLock {
 public:
  void lock() {
    for (int spins = 0; flag_.exchange(true, std::memory_order_acquire); spins++) {
      while (flag_.load(std::memory_order_relaxed)) {
        if (++spins > 64) std::this_thread::yield();
#if defined(__x86_64__) || defined(__i386__)
        else
          __builtin_ia32_pause();
#endif
      }
    }
  }
  void unlock() { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

// n's cache, made on first use (from a per-thread pool); free_cache gives one back (null: nothing)
UOpCache* new_cache_of(UOpNode* n);
void free_cache(UOpCache* c);
inline UOpCache* cache_of(UOpNode* n) {
  UOpCache* c = n->cache.load(std::memory_order_acquire);
  return c ? c : new_cache_of(n);
}
// the lock that guards writes to n's cache (one of 64, by hash)
SpinLock& cache_mutex(UOpNode* n);
// holds n's cache lock while a value is stored, unless no other thread can touch the cache: n is this thread's
// private node, or the owner thread alone uses UOps (NodeOp's handshake keeps any other thread out until the store is
// done). The locked exchange was ~1% of codegen.
class CacheLock {
 public:
  explicit CacheLock(UOpNode* n)
      : lock_(op_.plain() && (t_uop_role != 3 || (n->flags.load(std::memory_order_relaxed) & kPrivate))
                  ? nullptr
                  : &cache_mutex(n)) {
    if (lock_) lock_->lock();
  }
  ~CacheLock() {
    if (lock_) lock_->unlock();
  }
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  NodeOp op_;
  SpinLock* lock_;
};

}  // namespace tg::detail
