// Where the compile stack's time goes, next to helpers.h's GlobalCounters (which count kernel runs): CPU seconds of
// the calling thread (so a busy machine does not inflate them; all of this work runs on the calling thread) spent
// scheduling (create_linear_with_vars), in codegen (to_program: every codegen pass, linearize, render; BEAM search
// included) and compiling + loading programs on their device, and how many programs were generated. Not in the
// reference; beautiful_mnist prints them for its first steps.
#pragma once
#include <atomic>
#include <ctime>
#include <cstdint>

namespace tg {

struct CompileCounters {
  static inline std::atomic<double> schedule_s{0.0}, codegen_s{0.0}, compile_s{0.0};
  // wall seconds of the lowering's two phases (codegen of every new kernel, then their compiles), which run on the
  // PARALLEL worker threads: what the user waits for, where the CPU seconds above add up the threads
  static inline std::atomic<double> codegen_wall_s{0.0}, compile_wall_s{0.0};
  static inline std::atomic<int64_t> programs{0}, threads{1};
  static void reset() {
    schedule_s = 0.0, codegen_s = 0.0, compile_s = 0.0, codegen_wall_s = 0.0, compile_wall_s = 0.0, programs = 0;
    threads = 1;
  }
};

// monotonic wall-clock seconds
inline double wall_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// the calling thread's CPU time in seconds
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// adds the thread CPU seconds of its lifetime to a counter
class ScopedSeconds {
 public:
  explicit ScopedSeconds(std::atomic<double>& into) : into_(into), st_(thread_cpu_seconds()) {}
  ~ScopedSeconds() { into_ += thread_cpu_seconds() - st_; }
  ScopedSeconds(const ScopedSeconds&) = delete;
  ScopedSeconds& operator=(const ScopedSeconds&) = delete;

 private:
  std::atomic<double>& into_;
  double st_;
};

}  // namespace tg
