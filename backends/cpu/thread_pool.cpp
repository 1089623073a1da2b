#include "backends/cpu/thread_pool.h"

namespace tg::cpu {

ThreadPool::ThreadPool(int n_threads) {
  for (int i = 1; i < n_threads; i++) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_start_.notify_all();
  for (auto& t : workers_) t.join();
}

// take indices of the current job until none is left
void ThreadPool::work() {
  for (;;) {
    int64_t i;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (next_ >= n_) return;
      i = next_++;
    }
    (*fn_)(i);
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_start_.wait(lk, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    work();
    {
      std::lock_guard<std::mutex> lk(mu_);
      finished_++;
    }
    cv_done_.notify_one();
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1) {
    for (int64_t i = 0; i < n; i++) fn(i);
    return;
  }
  std::lock_guard<std::mutex> submit(submit_mu_);
  {
    std::lock_guard<std::mutex> lk(mu_);
    fn_ = &fn;
    n_ = n;
    next_ = 0;
    finished_ = 0;
    generation_++;
  }
  cv_start_.notify_all();
  work();
  // every worker checks in for this generation before fn goes out of scope
  std::unique_lock<std::mutex> lk(mu_);
  cv_done_.wait(lk, [&] { return finished_ == (int)workers_.size(); });
  fn_ = nullptr;
}

}  // namespace tg::cpu
