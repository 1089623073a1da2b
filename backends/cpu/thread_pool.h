// A small fixed thread pool for the chunks of a THREAD-split kernel (one call per core_id). The calling thread works
// too, so a pool of n threads starts n - 1 workers; a pool of 1 runs everything on the caller, in order.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tg::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  int size() const { return (int)workers_.size() + 1; }
  // fn(0) ... fn(n - 1), spread over the threads; returns when all have returned. fn must not throw. Calls from
  // several threads are served one after the other.
  void parallel_for(int64_t n, const std::function<void(int64_t)>& fn);

 private:
  void worker_loop();
  void work();

  std::vector<std::thread> workers_;
  std::mutex submit_mu_;  // one job at a time
  std::mutex mu_;
  std::condition_variable cv_start_, cv_done_;
  const std::function<void(int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, next_ = 0;
  uint64_t generation_ = 0;
  int finished_ = 0;  // workers done with the current generation
  bool stop_ = false;
};

}  // namespace tg::cpu
