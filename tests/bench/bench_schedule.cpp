// Scheduler speed: create_linear_with_vars on the largest big SINKs of tests/data/schedule_goldens.txt and the MLP
// 784-512-512-10 forward at batch 512 (SCACHE=0 so every call schedules; recording off). Reports ms per schedule.
// The reference is timed on the same SINKs by tests/bench/time_schedule_reference.py (its last numbers are in
// tests/data/schedule_reference_times.txt).
#include <benchmark/benchmark.h>

#include <chrono>

#include "lib/helpers.h"
#include "lib/schedule/schedule.h"
#include "tests/support/schedule_goldens.h"

using namespace tg;

static const std::vector<SchedCase>& goldens() {
  static const std::vector<SchedCase> g = load_schedule_goldens(TG_TEST_DATA "/schedule_goldens.txt");
  return g;
}

static void BM_schedule(benchmark::State& state, const char* prog) {
  const SchedCase* c = nullptr;
  for (const auto& g : goldens())
    if (g.prog == prog && g.nth == 0) c = &g;
  if (!c) {
    state.SkipWithError("program not in schedule_goldens.txt");
    return;
  }
  Context ctx({{"TRACK_MATCH_STATS", 0}, {"SCACHE", 0}});
  create_linear_with_vars(c->big_sink);  // warm the matchers
  auto t0 = std::chrono::steady_clock::now();
  size_t kernels = 0;
  for (auto _ : state) {
    LinearWithVars lv = create_linear_with_vars(c->big_sink);
    kernels = lv.linear.nsrc();
    benchmark::DoNotOptimize(lv);
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  state.counters["kernels"] = (double)kernels;
  state.counters["nodes"] = (double)c->big_sink.toposort().size();
  state.counters["ms_per_schedule"] = s * 1e3 / (double)state.iterations();
}

// keep in sync with BENCH in tests/bench/time_schedule_reference.py
#define TG_BENCH(p) BENCHMARK_CAPTURE(BM_schedule, p, #p)->Unit(benchmark::kMillisecond);
TG_BENCH(mlp_784_512_512_10)
TG_BENCH(conv2d_backward)
TG_BENCH(mlp_softmax)
TG_BENCH(many_inputs)
TG_BENCH(softmax)
TG_BENCH(layernorm)
TG_BENCH(conv2d)
TG_BENCH(chain_of_kernels)

BENCHMARK_MAIN();
