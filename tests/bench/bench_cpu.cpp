// The CPU backend's costs (`build/tests/bench_cpu`, not part of ctest):
//   * BM_llvm_compile_goldens: LLVM 16 compile (parse + verify, default<O2>, object emission) of every golden kernel's
//     LLVM IR (tests/data/kernel_goldens.txt), uncached; counters are per-kernel medians in ms, and the load (ORC
//     link) time of the objects;
//   * BM_add_16M / BM_matmul_1024: the reference's own kernels for DEV=CPU:LLVM with its default optimizations
//     (tests/data/cpu_bench_kernels.txt: THREAD-split over 2 cores), run with 1 and 2 threads: GB/s of the add
//     (bytes loaded + stored) and GFLOPS of the matmul. gen_cpu_bench_kernels.py records the reference's own time for
//     each in that file (its launcher runs the core_id chunks one after the other).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "backends/cpu/cpu.h"
#include "tests/support/cpu_bench_kernels.h"
#include "tests/support/kernel_goldens.h"

using namespace tg;

namespace {

using tg::test::join_lines;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}


const std::vector<KernelGolden>& goldens() {
  static const std::vector<KernelGolden> g = load_kernel_goldens(TG_TEST_DATA "/kernel_goldens.txt");
  return g;
}

void BM_llvm_compile_goldens(benchmark::State& state) {
  cpu::CPUDevice& dev = cpu::CPUDevice::get();
  cpu::LLVMCompiler compiler(true, state.range(0) != 0);
  std::vector<double> total, parse, opt, codegen, load;
  int n_kernels = 0;
  std::string slowest;
  double slowest_ms = 0;
  // warm up LLVM (the first compile pays for lazy initialization)
  compiler.compile(join_lines(goldens()[0].llvm.source));
  for (auto _ : state) {
    n_kernels = 0;
    for (const auto& k : goldens()) {
      std::string src = join_lines(k.llvm.source);
      cpu::CompileTiming t;
      std::vector<uint8_t> lib;
      auto t0 = std::chrono::steady_clock::now();
      try {
        lib = compiler.compile(src, &t);
      } catch (const CompileError&) {
        continue;  // the reference refuses it too (trunc_floor: @llvm.trunc.float)
      }
      total.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (total.back() > slowest_ms) slowest_ms = total.back(), slowest = k.name + " (" + k.program + ")";
      parse.push_back(t.parse);
      opt.push_back(t.opt);
      codegen.push_back(t.codegen);
      t0 = std::chrono::steady_clock::now();
      auto prg = dev.runtime(k.name, lib);
      load.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      benchmark::DoNotOptimize(prg.get());
      n_kernels++;
    }
  }
  state.SetLabel("slowest: " + slowest);
  state.counters["kernels"] = n_kernels;
  state.counters["median_compile_ms"] = median(total);
  state.counters["median_parse_ms"] = median(parse);
  state.counters["median_opt_ms"] = median(opt);
  state.counters["median_codegen_ms"] = median(codegen);
  state.counters["median_load_ms"] = median(load);
  state.counters["max_compile_ms"] = total.empty() ? 0 : *std::max_element(total.begin(), total.end());
}
// arg: verify_each (the reference sets LLVMPassBuilderOptionsSetVerifyEach)
BENCHMARK(BM_llvm_compile_goldens)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(3);

const std::vector<CPUBenchKernel>& bench_kernels() {
  static const std::vector<CPUBenchKernel> k = load_cpu_bench_kernels(TG_TEST_DATA "/cpu_bench_kernels.txt");
  return k;
}

struct DeviceBuffers {
  std::vector<void*> ptrs;
  std::vector<size_t> sizes;
  ~DeviceBuffers() {
    for (size_t i = 0; i < ptrs.size(); i++) cpu::CPUDevice::get().allocator().free(ptrs[i], sizes[i]);
  }
};

// runs a bench kernel with state.range(0) threads; fill(i, host) fills buffer i; check(host buffers) after one run
void run_bench_kernel(benchmark::State& state, const std::string& label,
                      const std::function<void(size_t, std::vector<float>&)>& fill,
                      const std::function<bool(const std::vector<std::vector<float>>&)>& check) {
  cpu::CPUDevice& dev = cpu::CPUDevice::get();
  const CPUBenchKernel& k = find_cpu_bench_kernel(bench_kernels(), label);
  int saved = dev.threads();
  dev.set_threads((int)state.range(0));
  auto prg = dev.compile(k.source, k.name);
  DeviceBuffers b;
  std::vector<std::vector<float>> host;
  for (size_t i = 0; i < k.bufs.size(); i++) {
    host.emplace_back(k.bufs[i].second);
    fill(i, host.back());
    b.sizes.push_back(host.back().size() * sizeof(float));
    b.ptrs.push_back(dev.allocator().alloc(b.sizes.back()));
    dev.allocator().copyin(b.ptrs.back(), {reinterpret_cast<const uint8_t*>(host.back().data()), b.sizes.back()});
  }
  std::vector<std::optional<pyint>> vals;
  for (const auto& v : k.vals) vals.push_back(v == "-" ? std::nullopt : std::optional<pyint>(std::stoll(v)));
  LaunchArgs la;
  la.global_size = k.global;
  (*prg)(b.ptrs, vals, la);
  for (size_t i = 0; i < host.size(); i++)
    dev.allocator().copyout({reinterpret_cast<uint8_t*>(host[i].data()), b.sizes[i]}, b.ptrs[i]);
  if (!check(host)) {
    state.SkipWithError("wrong result");
    dev.set_threads(saved);
    return;
  }
  for (auto _ : state) (*prg)(b.ptrs, vals, la);
  const double it = (double)state.iterations();
  state.counters["GB/s"] = benchmark::Counter(k.lds * it / 1e9, benchmark::Counter::kIsRate);
  state.counters["GFLOPS"] = benchmark::Counter(k.ops * it / 1e9, benchmark::Counter::kIsRate);
  state.counters["threads"] = (double)state.range(0);
  dev.set_threads(saved);
}

void BM_add_16M(benchmark::State& state) {
  run_bench_kernel(
      state, "add_16M",
      [](size_t i, std::vector<float>& v) {
        for (size_t j = 0; j < v.size(); j++) v[j] = i == 0 ? 0.f : (float)(j % 1000) * (float)i;
      },
      [](const std::vector<std::vector<float>>& h) {
        for (size_t j = 0; j < h[0].size(); j += 4099)
          if (h[0][j] != h[1][j] + h[2][j]) return false;
        return true;
      });
}
// the reference's number in cpu_bench_kernels.txt is a best of 5: `--benchmark_repetitions=5` adds a min row
double min_of(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }
BENCHMARK(BM_add_16M)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->ComputeStatistics("min", min_of);

void BM_matmul_1024(benchmark::State& state) {
  const size_t N = 1024;
  run_bench_kernel(
      state, "matmul_1024",
      [](size_t i, std::vector<float>& v) {
        for (size_t j = 0; j < v.size(); j++) v[j] = i == 0 ? 0.f : (float)((j * 7 + i * 3) % 17) / 8.f - 1.f;
      },
      [&](const std::vector<std::vector<float>>& h) {
        for (size_t r = 0; r < N; r += 97)
          for (size_t c = 0; c < N; c += 89) {
            double acc = 0;
            for (size_t j = 0; j < N; j++) acc += (double)h[1][r * N + j] * h[2][j * N + c];
            if (std::fabs(h[0][r * N + c] - acc) > 1e-3 * (1 + std::fabs(acc))) return false;
          }
        return true;
      });
}
BENCHMARK(BM_matmul_1024)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->ComputeStatistics("min", min_of);

}  // namespace

BENCHMARK_MAIN();
