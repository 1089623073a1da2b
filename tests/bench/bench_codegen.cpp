// Per-kernel codegen speed: full_rewrite_to_sink + linearize + render (to_program without compiling) over the ASTs of
// tests/data/codegen_goldens.txt, with ClangRenderer and CPULLVMRenderer, recording off. One iteration = every AST
// once. The reference is timed on the same ASTs by bench_reference_codegen.py.
#include <benchmark/benchmark.h>

#include <chrono>

#include "lib/codegen/codegen.h"
#include "lib/codegen/late/program.h"
#include "lib/renderer/cstyle.h"
#include "lib/renderer/llvmir.h"
#include "tests/support/codegen_goldens.h"

using namespace tg;

static const std::vector<UOp>& asts() {
  static const std::vector<UOp> a = [] {
    std::vector<UOp> r;
    for (const auto& k : load_codegen_goldens(TG_TEST_DATA "/codegen_goldens.txt")) r.push_back(k.ast);
    return r;
  }();
  return a;
}

template <typename R>
static R make_renderer(const char* name) {
  R r(Target{"CPU", name, "x86_64,native", "", ""});
  r.global_max = std::vector<pyint>{8, 0, 0};  // the goldens' NUM_CPU_THREADS
  return r;
}

static void report(benchmark::State& state, double seconds) {
  double n = (double)asts().size() * (double)state.iterations();
  state.counters["kernels"] = (double)asts().size();
  state.counters["us_per_kernel"] = seconds * 1e6 / n;
}

template <typename R>
static void BM_to_program(benchmark::State& state, const char* name) {
  R ren = make_renderer<R>(name);
  Context ctx({{"TRACK_MATCH_STATS", 0}});
  for (const UOp& a : asts()) to_program(a, ren);  // warm the per-renderer matcher caches
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state)
    for (const UOp& a : asts()) benchmark::DoNotOptimize(to_program(a, ren));
  report(state, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

template <typename R>
static void BM_full_rewrite_to_sink(benchmark::State& state, const char* name) {
  R ren = make_renderer<R>(name);
  Context ctx({{"TRACK_MATCH_STATS", 0}});
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state)
    for (const UOp& a : asts()) benchmark::DoNotOptimize(full_rewrite_to_sink(a, ren, a.tag().is_none()));
  report(state, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

static void BM_to_program_clang(benchmark::State& s) { BM_to_program<ClangRenderer>(s, "CLANG"); }
static void BM_to_program_llvm(benchmark::State& s) { BM_to_program<CPULLVMRenderer>(s, "LLVM"); }
static void BM_full_rewrite_to_sink_clang(benchmark::State& s) { BM_full_rewrite_to_sink<ClangRenderer>(s, "CLANG"); }
BENCHMARK(BM_to_program_clang)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_to_program_llvm)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_full_rewrite_to_sink_clang)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
