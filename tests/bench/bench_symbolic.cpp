// graph_rewrite with the reference's symbolic/sym matchers over the 12000-expression index corpus
// (tests/data/index_corpus.txt), with recording off, with counters only (TRACK_MATCH_STATS=1) and with full
// recording into a SQLite trace (TRACK_MATCH_STATS=2). The same corpus is timed in the reference by
// bench_reference_symbolic.py. One iteration = one pass over the whole corpus.
#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "lib/uop/symbolic.h"
#include "lib/uop/track.h"
#include "tests/support/index_corpus.h"
#include "viz/writer/trace_writer.h"

using namespace tg;

struct Corpus {
  std::vector<UOp> in;
  std::vector<const PatternMatcher*> pm;
  uint64_t attempts = 0, matches = 0;
};
static Corpus& corpus() {
  static Corpus c = [] {
    Corpus c;
    for (auto& k : load_corpus(TG_TEST_DATA "/index_corpus.txt")) {
      c.in.push_back(decode_graph(k.in));
      c.pm.push_back(k.matcher == "sym" ? &sym() : &symbolic());
    }
    // attempts and matches of one pass, counted once with TRACK_MATCH_STATS=1
    Context ctx({{"TRACK_MATCH_STATS", 1}});
    track::reset_match_stats();
    for (size_t i = 0; i < c.in.size(); i++) graph_rewrite(c.in[i], *c.pm[i]);
    for (auto& [id, v] : track::match_stats()) c.attempts += v.attempts, c.matches += v.matches;
    track::reset_match_stats();
    return c;
  }();
  return c;
}

static void run_pass(const Corpus& c) {
  for (size_t i = 0; i < c.in.size(); i++) benchmark::DoNotOptimize(graph_rewrite(c.in[i], *c.pm[i]));
}

static void report(benchmark::State& state, const Corpus& c, double seconds) {
  double passes = (double)state.iterations();
  state.counters["exprs"] = (double)c.in.size();
  state.counters["attempts"] = (double)c.attempts;
  state.counters["ns_per_attempt"] = seconds * 1e9 / (passes * (double)c.attempts);
  state.counters["ns_per_expr"] = seconds * 1e9 / (passes * (double)c.in.size());
}

static void BM_corpus_recording_off(benchmark::State& state) {
  const Corpus& c = corpus();
  Context ctx({{"TRACK_MATCH_STATS", 0}});
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) run_pass(c);
  report(state, c, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

static void BM_corpus_counters_only(benchmark::State& state) {
  const Corpus& c = corpus();
  Context ctx({{"TRACK_MATCH_STATS", 1}});
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) run_pass(c);
  report(state, c, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

static void BM_corpus_full_recording(benchmark::State& state) {
  const Corpus& c = corpus();
  // TG_BENCH_TRACE=<path> keeps the recorded trace for inspection (default: a temporary file, removed)
  const char* keep = std::getenv("TG_BENCH_TRACE");
  std::string path = keep && *keep ? keep : std::string(P_tmpdir) + "/tg_bench_" + std::to_string(getpid()) + ".trace.db";
  if (keep && *keep) std::remove(path.c_str());
  // baseline: the same passes without recording, to report the recording overhead per match
  double off_secs;
  {
    Context off({{"TRACK_MATCH_STATS", 0}});
    run_pass(c);  // warm
    auto b0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 3; i++) run_pass(c);
    off_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - b0).count() / 3;
  }
  Context ctx({{"TRACK_MATCH_STATS", 2}});
  Recorder* r = viz::open_trace_writer(path).release();
  set_recorder(r);
  uint64_t m0 = track::record_totals().matches;
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    track::Group g("corpus");
    run_pass(c);
  }
  double producer_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r->finish();  // flushing and building indexes count as recording cost
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  state.counters["producer_ms_per_pass"] = producer_secs * 1e3 / (double)state.iterations();
  state.counters["drain_ms"] = (secs - producer_secs) * 1e3;
  set_recorder(nullptr);
  uint64_t recorded = track::record_totals().matches - m0;
  struct stat st {};
  stat(path.c_str(), &st);
  report(state, c, secs);
  state.counters["recorded_matches"] = (double)recorded;
  double passes = (double)state.iterations();
  state.counters["overhead_ns_per_match"] = (secs - off_secs * passes) * 1e9 / (double)recorded;
  state.counters["producer_overhead_ns_per_match"] = (producer_secs - off_secs * passes) * 1e9 / (double)recorded;
  state.counters["trace_bytes_per_match"] = (double)st.st_size / (double)recorded;
  delete r;
  if (!(keep && *keep)) std::remove(path.c_str());
}

// full recording into a recorder that drops everything: the engine's share of the recording cost (timing every
// match, per-step statistics), without the trace writer's
struct NullRecorder final : Recorder {
  uint64_t n = 0;
  uint64_t context_begin(const std::string&, int64_t) override { return ++n; }
  void context_rename(uint64_t, const std::string&) override {}
  void context_end(uint64_t, int64_t) override {}
  uint64_t step_begin(const StepInfo&, const UOp&) override { return ++n; }
  void step_end(uint64_t, const UOp*, int64_t, std::vector<RuleStat>&& stats, const std::string&) override {
    benchmark::DoNotOptimize(stats.data());
  }
  void match(uint64_t, uint32_t, const UOp&, const UOp&, uint32_t, int64_t) override {}
  void rule_error(uint64_t, uint32_t, const UOp&, const UOp&, uint32_t, const std::string&) override {}
  void note_uop(const UOp&) override {}
  void finish() override {}
  std::string path() const override { return ""; }
};

static void BM_corpus_recording_engine_side(benchmark::State& state) {
  const Corpus& c = corpus();
  Context ctx({{"TRACK_MATCH_STATS", 2}});
  NullRecorder r;
  set_recorder(&r);
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    track::Group g("corpus");
    run_pass(c);
  }
  report(state, c, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  set_recorder(nullptr);
}

BENCHMARK(BM_corpus_recording_off)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_corpus_counters_only)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_corpus_recording_engine_side)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_corpus_full_recording)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK_MAIN();
