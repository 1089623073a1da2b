// Writes a trace whose steps rewrite big graphs, for tinyviz's stepping benchmark (scripts/bench.sh): for each target
// size, index expressions of the corpus are gathered under one SINK until the graph has that many nodes, and `symbolic`
// rewrites it as one step; with --steps N, a last context holds N small steps (one corpus expression each), for the
// timeline. Prints "step <id> <name> <matches>" per big step, read back from the trace.
//   gen_big_trace OUT.trace.db [--steps N] [SIZE...]        (default sizes: 100 500 2000)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lib/uop/symbolic.h"
#include "lib/uop/track.h"
#include "tests/support/index_corpus.h"
#include "viz/reader/reader.h"
#include "viz/writer/trace_writer.h"

using namespace tg;

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {  // "--help" is not a file to write
    std::fprintf(stderr, "usage: gen_big_trace OUT.trace.db [--steps N] [SIZE...]\n");
    return argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") ? 0 : 2;
  }
  std::string path = argv[1];
  std::vector<size_t> sizes;
  long small_steps = 0;
  for (int i = 2; i < argc; i++) {
    bool steps = std::string(argv[i]) == "--steps";
    if (steps && ++i == argc) {
      std::fprintf(stderr, "gen_big_trace: --steps needs a count\n");
      return 2;
    }
    char* end = nullptr;
    long v = std::strtol(argv[i], &end, 10);
    if (!end || *end || v < (steps ? 0 : 2)) {
      std::fprintf(stderr, "gen_big_trace: '%s' is not a %s\n", argv[i], steps ? "step count" : "node count >= 2");
      return 2;
    }
    if (steps) small_steps = v;
    else sizes.push_back((size_t)v);
  }
  if (sizes.empty()) sizes = {100, 500, 2000};
  std::vector<UOp> exprs;
  for (auto& k : load_corpus(TG_TEST_DATA "/index_corpus.txt")) exprs.push_back(decode_graph(k.in));

  Context ctx({{"TRACK_MATCH_STATS", 2}});
  Recorder* r = viz::open_trace_writer(path).release();
  set_recorder(r);
  size_t next = 0;
  for (size_t target : sizes) {
    std::vector<UOp> srcs;
    UOp sink;
    while (next < exprs.size()) {
      srcs.push_back(exprs[next++]);
      sink = UOp::sink(srcs);
      if (sink.toposort().size() >= target) break;
    }
    track::Group g("graph of " + std::to_string(target) + " nodes");
    std::string name = "symbolic " + std::to_string(sink.toposort().size()) + " nodes";
    graph_rewrite(sink, symbolic(), {.name = name.c_str()});
  }
  if (small_steps) {
    track::Group g(std::to_string(small_steps) + " small steps");
    for (long i = 0; i < small_steps; i++) graph_rewrite(exprs[(size_t)i % exprs.size()], symbolic(), {.name = "small"});
  }
  r->finish();
  set_recorder(nullptr);
  delete r;

  auto t = viz::Trace::open(path);
  for (const auto& s : t->steps())
    if (s.depth == 0 && s.name != "small")
      std::printf("step %lld %s %llu\n", (long long)s.id, s.name.c_str(), (unsigned long long)t->matches(s.id).size());
  return 0;
}
