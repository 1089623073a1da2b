// lib/helpers: parallel_for's worker pool
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "lib/helpers.h"

using namespace tg;

TEST(ParallelFor, EachIndexOnceOnSeveralThreads) {
  for (int64_t workers : {1, 2, 3, 8}) {
    std::vector<std::atomic<int>> hits(1000);
    std::mutex mu;
    std::set<std::thread::id> ids;
    parallel_for(hits.size(), workers, [&](size_t i) {
      hits[i]++;
      std::lock_guard lk(mu);
      ids.insert(std::this_thread::get_id());
      if (workers > 1) std::this_thread::yield();
    });
    for (size_t i = 0; i < hits.size(); i++) {
      ASSERT_EQ(hits[i].load(), 1) << "index " << i << ", " << workers << " workers";
    }
    EXPECT_LE(ids.size(), (size_t)workers);
    if (workers == 1) {
      EXPECT_EQ(ids.size(), 1u);
    }
  }
}

TEST(ParallelFor, PoolThreadsStayBetweenCalls) {
  // a helper thread's thread_local state survives from one call to the next: no thread is started per call (a
  // started thread would count its calls from 0 again)
  thread_local int calls_on_this_thread = 0;
  const auto caller = std::this_thread::get_id();
  int most = 0;
  std::mutex mu;
  for (int r = 0; r < 20; r++) {
    std::atomic<int> arrived{0};
    parallel_for(2, 2, [&](size_t) {
      arrived++;  // both indices run at once, one on the caller, one on a helper
      while (arrived.load() < 2) std::this_thread::yield();
      if (std::this_thread::get_id() == caller) return;
      std::lock_guard lk(mu);
      most = std::max(most, ++calls_on_this_thread);
    });
  }
  EXPECT_GT(most, 1);
}

TEST(ParallelFor, FirstExceptionIsRethrownAndThePoolStillWorks) {
  // the indices after 3 start once index 3 has begun and take 100 us each: the other thread alone would need a
  // second for all of them, so a thread that is descheduled between the throw and its catch cannot make the handing
  // out look unstopped (with instant indices, under ctest -j2 it sometimes ran all 10,000)
  std::atomic<int> ran{0};
  std::atomic<bool> three_began{false};
  EXPECT_THROW(parallel_for(10000, 2,
                            [&](size_t i) {
                              ran++;
                              if (i == 3) three_began = true, throw Error("index 3 failed");
                              if (i < 3) return;
                              while (!three_began.load()) std::this_thread::yield();
                              std::this_thread::sleep_for(std::chrono::microseconds(100));
                            }),
               Error);
  EXPECT_LT(ran.load(), 10000);  // the handing out stopped
  std::atomic<int> sum{0};
  parallel_for(100, 2, [&](size_t i) { sum += (int)i; });
  EXPECT_EQ(sum.load(), 4950);
}

TEST(ParallelFor, NestedAndConcurrentCallsFinish) {
  // a call from inside fn, and calls from two threads at once, run (alone when the pool is busy) and do all indices
  std::atomic<int> inner{0};
  parallel_for(8, 2, [&](size_t) { parallel_for(10, 2, [&](size_t) { inner++; }); });
  EXPECT_EQ(inner.load(), 80);
  std::atomic<int> a{0}, b{0};
  std::thread t([&] {
    for (int r = 0; r < 50; r++) parallel_for(20, 2, [&](size_t) { a++; });
  });
  for (int r = 0; r < 50; r++) parallel_for(20, 2, [&](size_t) { b++; });
  t.join();
  EXPECT_EQ(a.load(), 1000);
  EXPECT_EQ(b.load(), 1000);
}
