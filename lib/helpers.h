// Port of the env/Context part of tinygrad/helpers.py plus small utilities shared by the engine.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lib/error.h"
#include "profiler/clock.h"

namespace tg {

// Errors a user can cause (bad shapes, bad env values, unreadable trace) derive from tg::Error (lib/error.h).
class EnvError : public Error {
 public:
  using Error::Error;
};
// Raised by the rewrite engine (infinite loops, REWRITE_ERROR re-raises keep the original type).
class RewriteError : public Error {
 public:
  using Error::Error;
};

// getenv with tinygrad semantics: an integer, default when unset; a malformed value throws EnvError naming the variable.
int64_t getenv_int(const char* key, int64_t default_value);
// the same, and a value outside [lo, hi] throws EnvError naming the variable and its range
int64_t getenv_int(const char* key, int64_t default_value, int64_t lo, int64_t hi);
std::string getenv_str(const char* key, const std::string& default_value);

// A process-wide setting read from the environment once, changeable at runtime (Context below). Like the reference,
// values are global, not per thread. A value set in the environment must lie in [lo, hi]: a malformed or out-of-range
// value is reported on stderr with the variable's range and the program exits with status 2 (ContextVars are read
// during static initialization, before main can catch anything).
class ContextVar {
 public:
  ContextVar(const char* key, int64_t default_value, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX);
  int64_t value() const { return value_.load(std::memory_order_relaxed); }
  void set(int64_t v) { value_.store(v, std::memory_order_relaxed); }
  operator int64_t() const { return value(); }
  const char* key() const { return key_; }
  static ContextVar* find(std::string_view key);

 private:
  const char* key_;
  std::atomic<int64_t> value_;
};

// RAII override of ContextVars: `Context c({{"DEBUG", 2}});`
class Context {
 public:
  Context(std::initializer_list<std::pair<const char*, int64_t>> kv);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

 private:
  std::vector<std::pair<ContextVar*, int64_t>> old_;
};

extern ContextVar DEBUG, SPEC, VIZ, TRACK_MATCH_STATS, REWRITE_STACK_LIMIT, PROFILE;

// python's str.strip of balanced outer parens (helpers.strip_parens)
std::string strip_parens(const std::string& s);

// a cheap cycle counter for short durations (rule attempts); ticks_to_ns converts a difference
int64_t fast_ticks();
double ns_per_tick();
inline int64_t ticks_to_ns(int64_t ticks) { return (int64_t)((double)ticks * ns_per_tick()); }

// helpers.GlobalCounters: totals the realize engine keeps (kernel count, FLOPs, bytes, kernel seconds, memory in use)
struct GlobalCounters {
  static inline std::atomic<int64_t> global_ops{0}, global_mem{0}, kernel_count{0}, mem_used{0};
  static inline std::atomic<double> time_sum_s{0.0};
  static void reset() { global_ops = 0, global_mem = 0, kernel_count = 0, time_sum_s = 0.0; }
};

// GlobalCounters.mem_used_per_device, and the most each device ever held at once (not in the reference: it is the
// peak a trace's memory lane shows). Like mem_used, never reset.
struct DeviceMemory {
  int64_t used = 0, peak = 0;
};
std::map<std::string, DeviceMemory> mem_used_per_device();
void add_mem_used(const std::string& device, int64_t delta);

// helpers.size_to_str / time_to_str / ansipad (ansistrip is in lib/uop/kernel_info.h (colored is in lib/codegen/opt/opt.h)
std::string size_to_str(int64_t s);
std::string time_to_str(double t, int w = 8);
std::string ansipad(const std::string& s, int n);

// fn(0) .. fn(n-1), each index once, on nworkers threads: the caller and nworkers-1 threads of a process-wide pool
// that stays up between calls (its threads keep their warm caches and allocator state, and no call pays a thread's
// start). The first exception stops the handing out of indices and is rethrown once every thread is done. A call
// made while another runs on the pool (from another thread, or from inside fn) runs its indices on the caller alone.
void parallel_for(size_t n, int64_t nworkers, const std::function<void(size_t)>& fn);
// what the UOp store does around the pool's work (set by lib/uop/node_store.cpp, which helpers cannot see): a section
// begins before the pool's threads are woken and ends after they are done; each pool thread marks itself at its start
struct ParallelHooks {
  void (*section_begin)() = nullptr;
  void (*section_end)() = nullptr;
  void (*worker_start)() = nullptr;
};
ParallelHooks& parallel_hooks();

}  // namespace tg
