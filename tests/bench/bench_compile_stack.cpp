// The compile stack on two models (what bench_reference_compile_stack.py times on the reference, same graphs):
//   (a) the MLP 784-512-512-10 forward at batch 512, (b) a ResNet-style conv stack forward (batch 8, 3x32x32 ->
//   conv 64 -> 2 residual blocks -> global pool -> linear 10); and (c) beautiful_mnist's first training step (the
//   weights' initialization, forward, backward and Adam at batch 512: the schedule + codegen a user's first step waits for).
// Per model and pass: schedule (Tensor::schedule_linear: callify + create_linear_with_vars, schedule cache off),
// codegen (to_program: full_rewrite_to_sink + linearize + render of every kernel), LLVM compile of every kernel
// (uncached). Pass 1 is cold (matcher tables, LLVM start-up); the best later pass is the warm number.
// Then the engine's way, what a user waits for: each distinct kernel once, on every core (parallel_for on
// NUM_CPU_THREADS threads, the caller's and the pool's, taking the kernels in turn, as lower_and_compile does). The
// reference's lower_and_compile also codegens on all cores, on a pool of worker processes (PARALLEL):
// bench_reference_lower.py times it.
// BENCH_MODEL=mlp|resnet|mnist_train runs one model; BENCH_PAR_ONLY=1 runs one single-threaded pass (to profile the
// engine's passes); PARALLEL=n sets the engine's workers; BENCH_SCHEDULE_ONLY=1 stops after the schedule (to profile
// the scheduler); BENCH_PER_KERNEL=1 prints each kernel's codegen time; BENCH_NO_COMPILE=1 skips LLVM (to profile
// codegen); BENCH_TIMELINE=1 prints, for each parallel pass, which thread took each kernel, when it started and ended.
// On several threads each kernel's codegen runs on private nodes (to_program_private), as lower_and_compile does;
// TG_SHARED_CODEGEN=1 shares the intern table instead, BENCH_PRIVATE=1 uses private nodes on one thread too, and
// BENCH_VERIFY=1 checks that the first parallel pass's sources equal one-thread codegen's.
// Every one-thread pass ends with the LLVM compiles of its kernels (timed: the "llvm compile" numbers), as the
// reference's loop in bench_reference_compile_stack.py does. The engine's passes end as lower_and_compile's do, with
// Compiler::compile_cached on the workers (untimed): the first pass compiles, the later ones find their programs in
// the compile cache, as the reference's lower_and_compile finds them in its disk cache (CCACHE; with CCACHE=0 its MLP
// pass takes ~60 ms more, the LLVM compiles). BENCH_FRESH_COMPILE=1 compiles every engine pass's kernels again
// (compile, uncached), a first run's pipeline, which only our side would then pay: our schedule and codegen start
// with the caches LLVM leaves, and they are 10-15% slower for the MLP than in back-to-back passes (BENCH_NO_COMPILE=1).
// BENCH_GAP_MS=n waits n ms (a busy loop that touches no memory) in place of the compiles: a 50 ms wait costs the
// next pass about 0.6 ms of the 0.85 ms that the 50 ms of compiles cost, so most of the slowdown is the time between
// passes, not what LLVM leaves in the caches (docs/performance.md, "The cold start of a small graph").
// Passes: at least the count given, and more until the warm passes of each phase span BENCH_MIN_MS (default 1000 ms)
// of measured time: a shared machine's neighbours can burst, and a burst that covers all of a few 4 ms passes
// would be the "best" pass (the reference's passes take 0.2-9 s each, so its best of 3 spans seconds). The warm lines
// also give the median pass (the median schedule plus the median codegen).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "backends/cpu/cpu.h"
#include "backends/interp/interp.h"
#include "lib/codegen/codegen.h"
#include "lib/codegen/late/program.h"
#include "lib/device.h"
#include "lib/nn/nn.h"
#include "lib/nn/optim.h"
#include "lib/tensor.h"

using namespace tg;
using clk = std::chrono::steady_clock;

static double ms_since(clk::time_point t) { return std::chrono::duration<double, std::milli>(clk::now() - t).count(); }
// waits ms on this thread without sleeping or touching memory (BENCH_GAP_MS)
static void busy_wait_ms(double ms) {
  const auto t = clk::now();
  while (ms_since(t) < ms) {
  }
}

static Tensor mlp() {
  Tensor x = Tensor::empty({512, 784});
  Tensor w1 = Tensor::empty({784, 512}), b1 = Tensor::empty({512}), w2 = Tensor::empty({512, 512}),
         b2 = Tensor::empty({512}), w3 = Tensor::empty({512, 10}), b3 = Tensor::empty({10});
  return x.linear(w1, b1).relu().linear(w2, b2).relu().linear(w3, b3).log_softmax();
}

static Tensor resnet() {
  Tensor x = Tensor::empty({8, 3, 32, 32});
  Tensor w0 = Tensor::empty({64, 3, 3, 3});
  std::vector<Tensor> ws;
  for (int i = 0; i < 4; i++) ws.push_back(Tensor::empty({64, 64, 3, 3}));
  Tensor wf = Tensor::empty({64, 10}), bf = Tensor::empty({10});
  Tensor h = x.conv2d(w0, std::nullopt, 1, 1, 1, 1).relu();
  for (int i = 0; i < 2; i++)
    h = (h.conv2d(ws[2 * i], std::nullopt, 1, 1, 1, 1).relu().conv2d(ws[2 * i + 1], std::nullopt, 1, 1, 1, 1) + h).relu();
  return h.avg_pool2d({32, 32}).flatten(1).linear(wf, bf);
}

// examples/beautiful_mnist's model and train step (without the TinyJit and the random batch: the data are inputs)
static std::vector<Tensor> mnist_train() {
  Context training({{"TRAINING", 1}});
  Tensor::manual_seed(1337);
  nn::Conv2d c1{1, 32, 5}, c2{32, 32, 5}, c3{32, 64, 3}, c4{64, 64, 3};
  nn::BatchNorm b1{32}, b2{64};
  nn::Linear l{576, 10};
  StateDict sd;
  append_state(sd, "c1.", c1.state_dict()), append_state(sd, "c2.", c2.state_dict());
  append_state(sd, "b1.", b1.state_dict()), append_state(sd, "c3.", c3.state_dict());
  append_state(sd, "c4.", c4.state_dict()), append_state(sd, "b2.", b2.state_dict());
  append_state(sd, "l.", l.state_dict());
  auto opt = nn::Adam(get_parameters(sd));
  Tensor x = Tensor::empty({512, 1, 28, 28}), y = Tensor::empty({512}, dtypes::int32);
  Tensor h = b1(c2(c1(x).relu()).relu()).max_pool2d();
  h = b2(c4(c3(h).relu()).relu()).max_pool2d();
  opt->zero_grad();
  Tensor loss = l(h.flatten(1)).sparse_categorical_crossentropy(y).backward();
  std::vector<Tensor> out{loss};
  for (const Tensor& t : opt->schedule_step()) out.push_back(t);
  return out;
}

int main(int argc, char** argv) {
  int passes = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  // the renderer the reference is timed with (bench_reference_compile_stack.py: DEV=CPU:LLVM); DEV=CPU selects the
  // CLANG numerics, whose programs differ a little (native NEG/SUB/SQRT, fused multiply-adds)
  setenv("DEV", "CPU:LLVM", 0);
  cpu::register_device();
  interp::register_device();
  Context ctx({{"SCACHE", 0}, {"TRACK_MATCH_STATS", 0}});
  Compiled& dev = get_device("CPU");
  const Renderer& ren = dev.renderer();
  auto one = [](Tensor (*f)()) { return [f] { return std::vector<Tensor>{f()}; }; };
  std::vector<std::pair<const char*, std::function<std::vector<Tensor>()>>> models{
      {"mlp", one(&mlp)}, {"resnet", one(&resnet)}, {"mnist_train", &mnist_train}};
  const char* only = std::getenv("BENCH_MODEL");
  for (auto& [name, build] : models) {
    if (only && std::string(only) != name) continue;
    std::vector<double> sched, cg, cg_par, comp, sched_par;  // sched_par: the engine passes' schedules
    // the engine's codegen workers: PARALLEL, by default NUM_CPU_THREADS (PARALLEL=0: the caller alone, with the
    // same kernels: NUM_CPU_THREADS also decides their THREAD split)
    const int64_t parallel = getenv_int("PARALLEL", -1);
    const int nthreads = (int)std::max<int64_t>(1, parallel >= 0 ? parallel : NUM_CPU_THREADS.value());
    size_t calls = 0, kernels = 0;
    const bool par_only = std::getenv("BENCH_PAR_ONLY") != nullptr;
    const double min_ms = (double)getenv_int("BENCH_MIN_MS", 1000);
    const double gap_ms = (double)getenv_int("BENCH_GAP_MS", 0);
    // another pass while fewer than `passes` ran or the warm ones (all but the first) span less than min_ms
    auto more = [&](int p, const std::vector<double>& a, const std::vector<double>& b) {
      if (p < passes) return true;
      double warm = 0;
      for (size_t i = 1; i < a.size(); i++) warm += a[i] + (i < b.size() ? b[i] : 0.0);
      return warm < min_ms && p < 10000;
    };
    for (int p = 0; par_only ? p < 1 : more(p, sched, cg); p++) {
      std::vector<Tensor> outs = build();
      auto t0 = clk::now();
      UOp linear = Tensor::schedule_linear(outs);
      sched.push_back(ms_since(t0));
      if (std::getenv("BENCH_SCHEDULE_ONLY")) continue;
      auto t1 = clk::now();
      std::vector<std::string> srcs;
      for (const UOp& call : linear.src())
        if (call.src(0).op() == Ops::SINK) {
          auto tk = clk::now();
          UOp prg = to_program(call.src(0), ren);
          if (std::getenv("BENCH_PER_KERNEL")) std::printf("codegen %.1f ms %s\n", ms_since(tk), prg.arg().as<ProgramInfo>()->function_name().c_str());
          srcs.push_back(prg.src(2).arg().as_str());
        }
      cg.push_back(ms_since(t1));
      auto t2 = clk::now();
      if (gap_ms > 0)
        busy_wait_ms(gap_ms);
      else if (!std::getenv("BENCH_NO_COMPILE"))
        for (const std::string& s : srcs) dev.compiler().compile(s);
      comp.push_back(ms_since(t2));
      calls = linear.nsrc(), kernels = srcs.size();
    }
    // the parallel passes: graphs built and scheduled again once the single-threaded pass's nodes (and the results
    // cached on them) are gone; each distinct kernel once, as lower_and_compile does (ResNet's residual blocks repeat
    // their convolutions)
    size_t unique = 0;
    for (int p = 0; !std::getenv("BENCH_SCHEDULE_ONLY") && more(p, cg_par, sched_par); p++) {
      std::vector<Tensor> outs = build();
      auto ts = clk::now();
      UOp linear = Tensor::schedule_linear(outs);
      sched_par.push_back(ms_since(ts));
      std::vector<UOp> asts;
      for (const UOp& call : linear.src())
        if (call.src(0).op() == Ops::SINK && std::find(asts.begin(), asts.end(), call.src(0)) == asts.end())
          asts.push_back(call.src(0));
      unique = asts.size();
      struct Span {
        double start, end;
        int thread;
      };
      std::vector<Span> spans(asts.size());
      static std::atomic<int> next_thread{0};
      // private nodes on several threads, as lower_and_compile
      static const bool shared_codegen = std::getenv("TG_SHARED_CODEGEN") != nullptr;
      static const bool force_private = std::getenv("BENCH_PRIVATE") != nullptr;  // also on one thread (to profile)
      const bool verify = std::getenv("BENCH_VERIFY") && p == 0;
      std::vector<UOp> prgs(asts.size());
      std::vector<std::string> par_srcs(asts.size());
      auto tp = clk::now();
      parallel_for(asts.size(), nthreads, [&](size_t i) {
        thread_local int thread = next_thread++;
        double start = ms_since(tp);
        UOp prg = shared_codegen || (nthreads < 2 && !force_private) ? to_program(asts[i], ren)
                                                                     : to_program_private(asts[i], ren);
        par_srcs[i] = prg.src(2).arg().as_str();
        if (verify) prgs[i] = std::move(prg);  // else freed here, by the thread that made it
        spans[i] = {start, ms_since(tp), thread};
      });
      cg_par.push_back(ms_since(tp));
      // then the compiles on the workers, untimed, as lower_and_compile's second phase: from the compile cache after
      // the first pass, as the reference's come from its disk cache; BENCH_FRESH_COMPILE=1: LLVM every pass
      static const bool fresh = std::getenv("BENCH_FRESH_COMPILE") != nullptr;
      if (gap_ms > 0)
        parallel_for(nthreads, nthreads, [&](size_t) { busy_wait_ms(gap_ms); });
      else if (!std::getenv("BENCH_NO_COMPILE"))
        parallel_for(par_srcs.size(), nthreads, [&](size_t i) {
          if (fresh)
            dev.compiler().compile(par_srcs[i]);
          else
            dev.compiler().compile_cached(par_srcs[i]);
        });
      if (verify) {  // the parallel programs' sources are the one-thread ones
        size_t differ = 0;
        for (size_t i = 0; i < asts.size(); i++)
          differ += to_program(asts[i], ren).src(2).arg().as_str() != prgs[i].src(2).arg().as_str();
        std::printf("verify: %zu of %zu parallel programs differ from the one-thread ones\n", differ, asts.size());
        if (differ) return 1;
      }
      prgs.clear();
      if (std::getenv("BENCH_TIMELINE")) {
        std::printf("pass %d, %.2f ms:", p + 1, cg_par.back());
        for (size_t i = 0; i < spans.size(); i++)
          std::printf(" k%zu@t%d %.2f-%.2f", i, spans[i].thread, spans[i].start, spans[i].end);
        std::printf("\n");
      }
    }
    auto num = [](double x) {
      char b[32];
      std::snprintf(b, sizeof b, "%.1f", x);
      return std::string(b);
    };
    // every pass, or with many the first (cold) one and the warm ones' min, median and max
    auto fmt = [&](const std::vector<double>& v) {
      std::string s;
      if (v.size() <= 12) {
        for (size_t i = 0; i < v.size(); i++) s += (i ? ", " : "") + num(v[i]);
        return s;
      }
      std::vector<double> w(v.begin() + 1, v.end());
      std::sort(w.begin(), w.end());
      return num(v[0]) + ", then " + std::to_string(w.size()) + " passes: min " + num(w.front()) + " median " +
             num(w[w.size() / 2]) + " max " + num(w.back());
    };
    auto best = [](std::vector<double> v) {
      return v.empty() ? 0.0 : v.size() > 1 ? *std::min_element(v.begin() + 1, v.end()) : v[0];
    };
    std::printf("tinygrad-cpp %s: %zu calls, %zu kernels | schedule ms %s | codegen ms %s | llvm compile ms %s\n", name,
                calls, kernels, fmt(sched).c_str(), fmt(cg).c_str(), fmt(comp).c_str());
    // the median warm pass (all but the first), the typical pass beside the best one
    auto median = [](std::vector<double> v) {
      if (v.size() > 1) v.erase(v.begin());
      if (v.empty()) return 0.0;
      std::sort(v.begin(), v.end());
      return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    };
    std::printf(
        "  warm: schedule + codegen %.1f ms (schedule %.1f, codegen %.1f), llvm compile %.1f ms | median pass %.1f "
        "ms\n",
        best(sched) + best(cg), best(sched), best(cg), best(comp), median(sched) + median(cg));
    if (!cg_par.empty())
      std::printf(
          "  codegen of the %zu distinct kernels on %d threads ms %s | warm: schedule + codegen %.1f ms (schedule "
          "%.1f, codegen %.1f) | median pass %.1f ms\n",
          unique, nthreads, fmt(cg_par).c_str(), best(sched_par) + best(cg_par), best(sched_par), best(cg_par),
          median(sched_par) + median(cg_par));
  }
  return 0;
}
