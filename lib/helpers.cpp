#include "lib/helpers.h"
#include "lib/uop/kernel_info.h"

#include <algorithm>
#include <chrono>
#include <thread>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TG_HAS_RDTSC 1
#endif
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace tg {

int64_t getenv_int(const char* key, int64_t default_value) {
  const char* v = std::getenv(key);
  if (v == nullptr || *v == '\0') return default_value;
  char* end = nullptr;
  errno = 0;
  long long r = std::strtoll(v, &end, 10);
  while (end && (*end == ' ' || *end == '\t')) end++;
  if (errno != 0 || end == v || *end != '\0')
    throw EnvError(std::string("environment variable ") + key + "='" + v + "' is not an integer");
  return r;
}

int64_t getenv_int(const char* key, int64_t default_value, int64_t lo, int64_t hi) {
  int64_t r = getenv_int(key, default_value);
  if (std::getenv(key) != nullptr && *std::getenv(key) != '\0' && (r < lo || r > hi)) {
    std::string range = lo == INT64_MIN ? "at most " + std::to_string(hi)
                        : hi == INT64_MAX ? std::to_string(lo) + " or more"
                                          : "from " + std::to_string(lo) + " to " + std::to_string(hi);
    throw EnvError(std::string("environment variable ") + key + "=" + std::to_string(r) + " is out of range: " + key +
                   " takes " + range);
  }
  return r;
}

std::string getenv_str(const char* key, const std::string& default_value) {
  const char* v = std::getenv(key);
  return v == nullptr ? default_value : std::string(v);
}

static std::unordered_map<std::string_view, ContextVar*>& registry() {
  static std::unordered_map<std::string_view, ContextVar*> r;
  return r;
}

static int64_t env_or_exit(const char* key, int64_t default_value, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX) {
  // ContextVars are read during static initialization: a bad value is reported and the program stops cleanly
  try {
    return getenv_int(key, default_value, lo, hi);
  } catch (const EnvError& e) {
    std::fprintf(stderr, "tinygrad: %s\n", e.what());
    std::exit(2);
  }
}

ContextVar::ContextVar(const char* key, int64_t default_value, int64_t lo, int64_t hi)
    : key_(key), value_(env_or_exit(key, default_value, lo, hi)) {
  registry()[key] = this;
}

ContextVar* ContextVar::find(std::string_view key) {
  auto it = registry().find(key);
  return it == registry().end() ? nullptr : it->second;
}

Context::Context(std::initializer_list<std::pair<const char*, int64_t>> kv) {
  for (auto& [k, v] : kv) {
    ContextVar* cv = ContextVar::find(k);
    if (cv == nullptr) throw Error(std::string("Context: unknown ContextVar ") + k);
    old_.emplace_back(cv, cv->value());
    cv->set(v);
  }
}
Context::~Context() {
  for (auto it = old_.rbegin(); it != old_.rend(); ++it) it->first->set(it->second);
}

// VIZ first: TRACK_MATCH_STATS defaults to 2 when VIZ is set, PROFILE to abs(VIZ)
// VIZ: -1 records, 1 records and opens tinyviz at exit; TRACK_MATCH_STATS: 1 counts, 2 records, 3 also prints each
// match; DEBUG up to 7 like the reference
ContextVar VIZ("VIZ", 0, -1, 1);
ContextVar DEBUG("DEBUG", 0, 0, 7);
ContextVar SPEC("SPEC", 0, 0, 2);
ContextVar TRACK_MATCH_STATS("TRACK_MATCH_STATS", env_or_exit("VIZ", 0, -1, 1) != 0 ? 2 : 0, 0, 3);
ContextVar REWRITE_STACK_LIMIT("REWRITE_STACK_LIMIT", 250000, 1, INT64_MAX);
ContextVar PROFILE("PROFILE", std::llabs(env_or_exit("VIZ", 0, -1, 1)), 0, 1);

static bool is_balanced(std::string_view s) {
  int depth = 0;
  for (char c : s) {
    if (c == '(') depth++;
    else if (c == ')' && --depth < 0) return false;
  }
  return depth == 0;
}

std::string strip_parens(const std::string& s) {
  if (s.size() >= 2 && s.front() == '(' && s.back() == ')' && is_balanced(std::string_view(s).substr(1, s.size() - 2)))
    return s.substr(1, s.size() - 2);
  return s;
}

static std::mutex g_mem_mu;
static std::map<std::string, DeviceMemory>& mem_table() {
  static auto* m = new std::map<std::string, DeviceMemory>();  // process lifetime: buffers die during exit
  return *m;
}
std::map<std::string, DeviceMemory> mem_used_per_device() {
  std::lock_guard<std::mutex> lk(g_mem_mu);
  return mem_table();
}
void add_mem_used(const std::string& device, int64_t delta) {
  GlobalCounters::mem_used += delta;
  std::lock_guard<std::mutex> lk(g_mem_mu);
  DeviceMemory& m = mem_table()[device];
  m.used += delta;
  m.peak = std::max(m.peak, m.used);
}

}  // namespace tg

namespace tg {

int64_t fast_ticks() {
#ifdef TG_HAS_RDTSC
  return (int64_t)__rdtsc();
#else
  return now_ns();
#endif
}

double ns_per_tick() {
#ifdef TG_HAS_RDTSC
  // calibrated once against the steady clock (invariant TSC on every x86-64 this runs on)
  static const double f = [] {
    int64_t t0 = now_ns(), c0 = (int64_t)__rdtsc();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    int64_t t1 = now_ns(), c1 = (int64_t)__rdtsc();
    return c1 > c0 ? (double)(t1 - t0) / (double)(c1 - c0) : 1.0;
  }();
  return f;
#else
  return 1.0;
#endif
}

std::string size_to_str(int64_t s) {
  const std::pair<int64_t, const char*> units[] = {{1LL << 30, "GB"}, {1LL << 20, "MB"}, {1LL << 10, "KB"}};
  char buf[64];
  for (const auto& [d, pr] : units)
    if (s >= d) {
      std::snprintf(buf, sizeof(buf), "%.2f %s", (double)s / (double)d, pr);
      return buf;
    }
  return std::to_string(s) + " B";
}

std::string time_to_str(double t, int w) {
  char buf[64];
  if (t > 10) std::snprintf(buf, sizeof(buf), "%*.2fs ", w, t);
  else if (t > 10 / 1e3) std::snprintf(buf, sizeof(buf), "%*.2fms", w, t * 1e3);
  else std::snprintf(buf, sizeof(buf), "%*.2fus", w, t * 1e6);
  return buf;
}

std::string ansipad(const std::string& s, int n) {
  int len = (int)ansistrip(s).size();
  return s + std::string((size_t)std::max(n - len, 0), ' ');
}

namespace {
// the pool behind parallel_for: threads started on demand and never stopped (the pool is never destroyed, so a
// call from a static destructor at exit still finds it; the threads end with the process)
class WorkerPool {
 public:
  void run(size_t n, size_t nworkers, const std::function<void(size_t)>& fn) {
    if (busy_.exchange(true, std::memory_order_acquire)) {  // another call holds the pool: this one runs alone
      for (size_t i = 0; i < n; i++) fn(i);
      return;
    }
    struct Release {
      std::atomic<bool>& b;
      ~Release() { b.store(false, std::memory_order_release); }
    } release{busy_};
    const ParallelHooks& hooks = parallel_hooks();
    if (hooks.section_begin) hooks.section_begin();
    struct EndSection {  // after the helpers are done (or after a throw before they were woken)
      const ParallelHooks& h;
      ~EndSection() {
        if (h.section_end) h.section_end();
      }
    } end_section{hooks};
    {
      std::lock_guard<std::mutex> lk(mu_);
      while (threads_.size() + 1 < nworkers) threads_.emplace_back([this] { loop(); });
      fn_ = &fn, n_ = n, next_.store(0), err_ = nullptr;
      helpers_ = nworkers - 1, running_ = helpers_;
      generation_++;
    }
    wake_.notify_all();
    work();
    std::unique_lock<std::mutex> lk(mu_);
    done_.wait(lk, [this] { return running_ == 0; });
    fn_ = nullptr;
    if (std::exception_ptr e = std::exchange(err_, nullptr)) std::rethrow_exception(e);
  }

 private:
  void work() {
    for (size_t i; (i = next_.fetch_add(1)) < n_;) {
      try {
        (*fn_)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lk(mu_);
        if (!err_) err_ = std::current_exception();
        next_.store(n_);
      }
    }
  }
  void loop() {
    if (parallel_hooks().worker_start) parallel_hooks().worker_start();
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        wake_.wait(lk, [&] { return generation_ != seen && helpers_ > 0; });
        seen = generation_;
        helpers_--;  // this thread takes one of the call's helper places
      }
      work();
      std::lock_guard<std::mutex> lk(mu_);
      if (--running_ == 0) done_.notify_one();
    }
  }
  std::atomic<bool> busy_{false};
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(size_t)>* fn_ = nullptr;
  size_t n_ = 0, helpers_ = 0, running_ = 0;
  std::atomic<size_t> next_{0};
  std::exception_ptr err_;
  uint64_t generation_ = 0;
};
}  // namespace

ParallelHooks& parallel_hooks() {
  static ParallelHooks h;
  return h;
}

void parallel_for(size_t n, int64_t nworkers, const std::function<void(size_t)>& fn) {
  if (nworkers < 2 || n < 2) {
    for (size_t i = 0; i < n; i++) fn(i);
    return;
  }
  static WorkerPool* pool = new WorkerPool();
  pool->run(n, (size_t)std::min<int64_t>(nworkers, (int64_t)n), fn);
}

}  // namespace tg
