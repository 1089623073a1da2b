// The recorder: what is recorded equals what was performed, replay reproduces every step's output, a run killed with
// SIGKILL leaves a readable trace, and bad files give clear errors.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <atomic>
#include <thread>

#include "lib/uop/serialize.h"
#include "lib/uop/symbolic.h"
#include "lib/uop/track.h"
#include "tests/support/index_corpus.h"
#include "viz/reader/reader.h"
#include "viz/reader/replay.h"
#include "viz/writer/trace_writer.h"

using namespace tg;
using namespace tg::viz;

static std::string tmp_path(const std::string& name) {
  return std::string(::testing::TempDir()) + "tg_" + name + "_" + std::to_string(getpid()) + ".trace.db";
}
static UOp c(pyint v) { return UOp::const_(PyConst(v)); }

// records everything done in `fn` into a fresh trace and returns its path
template <typename F>
static std::string record(const std::string& name, F fn) {
  std::string path = tmp_path(name);
  Context ctx({{"TRACK_MATCH_STATS", 2}});
  Recorder* r = open_trace_writer(path).release();
  set_recorder(r);
  fn();
  r->finish();
  set_recorder(nullptr);
  delete r;
  return path;
}

// rebuild a UOp from the trace's exact arg encoding
static UOp uop_from_trace(const Trace& t, int64_t id) {
  std::vector<std::string> lines;
  std::vector<int64_t> order;
  std::unordered_map<int64_t, size_t> index;
  std::vector<std::pair<int64_t, bool>> st{{id, false}};
  while (!st.empty()) {
    auto [n, done] = st.back();
    st.pop_back();
    if (index.count(n)) continue;
    if (!done) {
      st.push_back({n, true});
      for (int64_t s : t.node(n).src) st.push_back({s, false});
      continue;
    }
    const Node& nd = t.node(n);
    std::string srcs;
    for (int64_t s : nd.src) srcs += (srcs.empty() ? "" : ",") + std::to_string(index.at(s));
    index[n] = lines.size();
    lines.push_back(std::string(nd.op_name) + " " + t.dtype_name(nd.dtype) + " " + t.str(nd.arg) + " " +
                    (nd.tag ? t.str(nd.tag) : std::string("N")) + " " + srcs);
  }
  return decode_graph(lines);
}

TEST(Recorder, RecordedEqualsPerformed) {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 7);
  std::vector<UOp> inputs = {(a * 4 + b).floordiv(c(4)), ((a + 3) * 2 + a * 5) % c(7), (a.lt(c(4))).where(a * 2, b + 1)};
  std::vector<UOp> outputs;
  uint64_t matches_before = track::record_totals().matches;
  std::string path = record("performed", [&] {
    track::Group g("test_group");
    g.rename("My Context");
    for (size_t i = 0; i < inputs.size(); i++) outputs.push_back(graph_rewrite(inputs[i], sym(), {.name = "simplify test"}));
  });
  uint64_t performed = track::record_totals().matches - matches_before;
  auto t = Trace::open(path);
  EXPECT_TRUE(t->complete());
  ASSERT_EQ(t->contexts().size(), 1u);
  EXPECT_EQ(t->contexts()[0].name, "My Context n1");
  // every graph_rewrite is a step; nested ones (simplify inside rules) are untracked like the reference
  std::vector<const StepRow*> top;
  for (const auto& s : t->steps())
    if (s.depth == 0) top.push_back(&s);
  ASSERT_EQ(top.size(), inputs.size());
  EXPECT_EQ(t->match_count(), performed);
  for (size_t i = 0; i < inputs.size(); i++) {
    const StepRow& s = *top[i];
    EXPECT_EQ(s.name, "simplify test");
    EXPECT_EQ(s.file, "tests/viz/test_recorder.cpp");
    EXPECT_FALSE(s.bottom_up);
    EXPECT_GT(s.t_end, s.t_start);
    // the recorded roots are exactly the performed rewrite's input and output
    EXPECT_EQ(uop_from_trace(*t, s.input_root), inputs[i]);
    EXPECT_EQ(uop_from_trace(*t, s.output_root), outputs[i]);
    // per-step statistics agree with the match rows
    uint64_t stat_matches = 0;
    for (const auto& r : t->rule_stats(s.id)) {
      stat_matches += r.matches;
      EXPECT_LE(r.matches, r.attempts);
    }
    EXPECT_EQ(stat_matches, (uint64_t)t->matches(s.id).size());
    // every match names a rule with its full source text
    for (const auto& m : t->matches(s.id)) {
      auto r = t->rule(m.rule);
      ASSERT_TRUE(r.has_value());
      EXPECT_NE(r->source.find("UPat"), std::string::npos) << r->source;
      EXPECT_FALSE(r->file.empty());
      EXPECT_GT(r->line, 0);
    }
    StepReplay rp(*t, s.id);
    EXPECT_TRUE(rp.reproduces_output()) << "step " << s.id;
  }
}

TEST(Recorder, BottomUpWalkAndNestedStepsReplay) {
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
  std::string path = record("modes", [&] {
    track::Group g("modes");
    UOp x = ((a + 0) * 1 + (b * 2 + b * 3)) + (a + 4) * 3;
    x.substitute({{a, b + 1}}, "bottom-up substitute");
    x.substitute({{a, b + 1}, {b, a}}, "walk substitute", true);
    graph_rewrite(x, symbolic(), {.bottom_up = true, .name = "bottom-up symbolic"});
    graph_rewrite(x, symbolic(), {.name = "top-down symbolic"});
    // like the reference, a bottom-up symbolic over an unsimplified floordiv divides by a zero const factor
    UOp y = ((a + 4) * 3 + (a + 4) * 5).floordiv(c(2));
    EXPECT_THROW(graph_rewrite(y, symbolic(), {.bottom_up = true, .name = "raises"}), Error);
  });
  auto t = Trace::open(path);
  ASSERT_EQ(t->steps().size(), 5u);
  EXPECT_TRUE(t->steps()[0].bottom_up);
  EXPECT_TRUE(t->steps()[1].walk);
  for (const auto& s : t->steps()) {
    if (s.name == "raises") {
      EXPECT_EQ(s.output_root, 0);
      continue;
    }
    StepReplay r(*t, s.id);
    EXPECT_TRUE(r.reproduces_output()) << s.name;
    // frames chain: each delta's removed nodes were in the previous frame
    for (size_t k = 1; k < r.num_frames(); k++) {
      auto d = r.delta(k);
      auto prev = r.nodes(k - 1);
      for (int64_t x : d.removed) EXPECT_NE(std::find(prev.begin(), prev.end(), x), prev.end());
    }
  }
}

// the replay computes a top-down frame from the previous one by rebuilding only what lies above the match, and a
// bottom-up frame directly from the input; both must give the frames of the reference's VIZ, a substitute of the
// whole graph per match (Mode::full), whatever order frames are asked in
TEST(Recorder, FastReplayEqualsWholeGraphSubstitute) {
  std::vector<UOp> exprs;
  for (auto& k : load_corpus(TG_TEST_DATA "/index_corpus.txt")) {
    exprs.push_back(decode_graph(k.in));
    if (exprs.size() == 60) break;
  }
  UOp sink = UOp::sink(exprs);
  std::string path = record("fast_replay", [&] {
    track::Group g("fast replay");
    graph_rewrite(sink, symbolic(), {.name = "top-down"});
    graph_rewrite(sink, symbolic(), {.bottom_up = true, .name = "bottom-up"});
    graph_rewrite(sink, symbolic(), {.name = "walk", .walk = true});
  });
  auto t = Trace::open(path);
  size_t checked = 0;
  for (const auto& s : t->steps()) {
    StepReplay seq(*t, s.id);
    if (seq.num_frames() < 2) continue;
    // (a walk replay substitutes the input once, so it cannot reproduce a rule that matched a node the walk rebuilt)
    if (s.name != "walk") {
      EXPECT_TRUE(seq.reproduces_output()) << s.name;
    }
    EXPECT_EQ(frames_differ(*t, s.id), "") << s.name;
    // a jump straight to the last frame, then back to the middle, gives what stepping gives
    size_t last = seq.num_frames() - 1, mid = last / 2;
    StepReplay jump(*t, s.id);
    EXPECT_EQ(jump.root(last), seq.root(last)) << s.name;
    EXPECT_EQ(jump.root(mid), seq.root(mid)) << s.name;
    FrameDelta a = jump.delta(mid), b = seq.delta(mid);
    EXPECT_EQ(a.added, b.added) << s.name;
    EXPECT_EQ(a.changed, b.changed) << s.name;
    EXPECT_EQ(std::set<int64_t>(a.removed.begin(), a.removed.end()), std::set<int64_t>(b.removed.begin(), b.removed.end()));
    checked++;
    if (s.name == "top-down") {
      EXPECT_GT(seq.num_frames(), 50u);
    }
  }
  EXPECT_EQ(checked, 3u);
}

// a finished trace keeps the graph of every kCheckpointEvery-th frame of a top-down step with many matches; a jump
// replays from the checkpoint before it and gives the frames a replay from the step's start gives. A damaged
// checkpoint is skipped (the frames do not depend on it); one that holds another frame's graph is caught by
// frames_differ (tinyviz-cli verify --full)
TEST(Recorder, ReplayCheckpoints) {
  const int64_t n = (int64_t)StepReplay::kCheckpointMin + 600;  // matches: CONST c -> CONST c+1, one at a time
  PatternMatcher count("count", {TG_RULE(UPat(Ops::CONST).named("x"), [n](UOp x) {
                         int64_t v = x.val().as_int();
                         return v < n ? UOp::const_(PyConst(pyint(v + 1)), x.dtype()) : UOp();
                       })});
  UOp v = UOp::variable("a", 0, 10);
  UOp root = UOp::sink(std::vector<UOp>{v * 3, v + c(0)});
  std::string path = record("checkpoints", [&] { graph_rewrite(root, count, {.name = "count up"}); });
  int64_t step = 0;
  {
    auto t = Trace::open(path);
    ASSERT_EQ(t->steps().size(), 1u);
    step = t->steps()[0].id;
    StepReplay r(*t, step);
    ASSERT_GE(r.num_frames(), (size_t)n);
    std::vector<size_t> want;
    for (size_t k = StepReplay::kCheckpointEvery; k < r.num_frames(); k += StepReplay::kCheckpointEvery) want.push_back(k);
    EXPECT_EQ(r.checkpoint_frames(), want);
    EXPECT_EQ(frames_differ(*t, step), "");
    // straight to the last frame, then back before the first checkpoint, then just past it
    StepReplay scratch(*t, step, StepReplay::Mode::scratch);
    size_t last = r.num_frames() - 1;
    for (size_t k : {last, size_t(5), StepReplay::kCheckpointEvery + 1, last - 1}) {
      EXPECT_EQ(r.root(k), scratch.root(k)) << k;
      FrameDelta a = r.delta(k), b = scratch.delta(k);
      EXPECT_EQ(a.added, b.added) << k;
      EXPECT_EQ(a.changed, b.changed) << k;
    }
    EXPECT_TRUE(r.reproduces_output());
  }
  auto sql = [&](const std::string& q) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, q.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  };
  // damaged: the replay goes from the start
  sql("UPDATE replay_checkpoints SET graph = x'01ff' WHERE frame = " + std::to_string(StepReplay::kCheckpointEvery));
  {
    auto t = Trace::open(path);
    StepReplay r(*t, step), scratch(*t, step, StepReplay::Mode::scratch);
    EXPECT_EQ(r.root(StepReplay::kCheckpointEvery + 10), scratch.root(StepReplay::kCheckpointEvery + 10));
    EXPECT_EQ(frames_differ(*t, step), "");
  }
  // well-formed but wrong: another frame's graph
  sql("UPDATE replay_checkpoints SET graph = (SELECT graph FROM replay_checkpoints WHERE frame = " +
      std::to_string(2 * StepReplay::kCheckpointEvery) + ") WHERE frame = " + std::to_string(StepReplay::kCheckpointEvery));
  {
    auto t = Trace::open(path);
    EXPECT_NE(frames_differ(*t, step), "");
  }
}

// a walk step substitutes the input once: its frames start from the input graph, so a replacement that contains the
// node it replaces (x -> NOOP(x), like "casted consts") is not rewritten again by the next frame
TEST(Recorder, WalkStepWithSelfContainingReplacementsReplays) {
  PatternMatcher wrap("wrap", {TG_RULE(UPat(Ops::CONST).dtype(dtypes::bool_).named("x"),
                                       [](UOp x) { return UOp(Ops::NOOP, x.dtype(), std::vector<UOp>{x}); })});
  UOp v = UOp::variable("a", 0, 3) < c(2);
  UOp t_c = UOp::const_(PyConst(true), dtypes::bool_), f_c = UOp::const_(PyConst(false), dtypes::bool_);
  UOp root = UOp::sink(std::vector<UOp>{v & t_c, v | f_c});
  UOp out;
  std::string path =
      record("walk_self", [&] { out = graph_rewrite(root, wrap, {.name = "wrap consts", .walk = true}); });
  EXPECT_EQ(out, UOp::sink(std::vector<UOp>{v & UOp(Ops::NOOP, dtypes::bool_, std::vector<UOp>{t_c}),
                                            v | UOp(Ops::NOOP, dtypes::bool_, std::vector<UOp>{f_c})}));
  auto t = Trace::open(path);
  ASSERT_EQ(t->steps().size(), 1u);
  StepReplay r(*t, t->steps()[0].id);
  ASSERT_EQ(r.num_frames(), 3u);
  EXPECT_TRUE(r.reproduces_output());
}

// a replay builds the nodes of its frames that the program never recorded (negative ids); when a later step's graph
// holds such a node as recorded, replays from then on must give the recorded node, or a step replayed after the
// other one no longer reproduces its output
TEST(Recorder, ReplayPrefersRecordedNodesLoadedLater) {
  UOp a = UOp::variable("a", 0, 3), b = UOp::variable("b", 0, 3);
  PatternMatcher mul1(
      "mul1", {TG_RULE(UPat(Ops::MUL).src(UPat::var("x"), UPat(Ops::CONST).arg(Arg(1))), [](UOp x) { return x; })});
  PatternMatcher mul1_a("mul1_a", {TG_RULE(UPat(Ops::MUL).src(UPat::var("x"), UPat(Ops::CONST).arg(Arg(1))),
                                           [a](UOp x) { return x == a ? x : UOp(); })});
  UOp g = (a * c(1)) + (b * c(1));
  std::string path = record("later", [&] {
    // the replay's first frame is a + b*1, a node this rewrite never built (it rebuilt the sum once, as a + b)
    EXPECT_EQ(graph_rewrite(g, mul1, {.name = "both"}), a + b);
    // this rewrite's output is a + b*1, recorded
    EXPECT_EQ(graph_rewrite(g, mul1_a, {.name = "only a"}), a + (b * c(1)));
  });
  auto t = Trace::open(path);
  ASSERT_EQ(t->steps().size(), 2u);
  StepReplay first(*t, t->steps()[0].id);
  ASSERT_EQ(first.num_frames(), 3u);
  EXPECT_LT(first.root(1), 0);  // built by the replay
  EXPECT_TRUE(first.reproduces_output());
  StepReplay second(*t, t->steps()[1].id);
  EXPECT_TRUE(second.reproduces_output());
  EXPECT_EQ(second.root(1), t->steps()[1].output_root);
}

TEST(Recorder, RuleErrorIsRecorded) {
  PatternMatcher boom("boom", {TG_RULE(UPat(Ops::ADD).named("x"), [](UOp x) -> UOp { throw Error("rule exploded"); })});
  std::string path = record("error", [&] {
    track::Group g("errors");
    EXPECT_THROW(graph_rewrite(c(1) + UOp::variable("a", 0, 3), boom, {.name = "failing"}), Error);
  });
  auto t = Trace::open(path);
  ASSERT_EQ(t->steps().size(), 1u);
  EXPECT_EQ(t->steps()[0].output_root, 0);
  EXPECT_FALSE(t->steps()[0].error.empty());
  auto m = t->matches(t->steps()[0].id);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_TRUE(m[0].is_error);
  EXPECT_NE(t->str(m[0].error).find("rule exploded"), std::string::npos);
  EXPECT_EQ(t->node(m[0].after).op_name, "REWRITE_ERROR");
}

TEST(Recorder, DemoTraceReplaysEveryStep) {
  std::string path = tmp_path("demo");
  std::string cmd = std::string("VIZ=-1 PRINT_MATCH_STATS=0 VIZ_PATH='") + path + "' '" + TG_DEMO_BIN + "' > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto t = Trace::open(path);
  EXPECT_TRUE(t->complete());
  EXPECT_GE(t->contexts().size(), 4u);
  EXPECT_GE(t->match_count(), 500u);
  size_t checked = 0;
  for (const auto& s : t->steps()) {
    StepReplay r(*t, s.id);
    EXPECT_TRUE(r.reproduces_output()) << "step " << s.id << " " << s.name;
    checked++;
  }
  EXPECT_EQ(checked, t->steps().size());
  // the same on a connection opened for queries only (tinyviz's frame building): no catalog, steps read one by one
  auto q = Trace::open_for_queries(path);
  EXPECT_TRUE(q->steps().empty());
  for (const auto& s : t->steps()) {
    const StepRow& qs = q->step(s.id);
    EXPECT_EQ(qs.name, s.name);
    EXPECT_EQ(qs.context, s.context);
    EXPECT_EQ(qs.input_root, s.input_root);
    EXPECT_EQ(qs.output_root, s.output_root);
    EXPECT_EQ(qs.n_matches, s.n_matches);
    EXPECT_EQ(q->matches(s.id).size(), t->matches(s.id).size());
    StepReplay r(*q, s.id);
    EXPECT_TRUE(r.reproduces_output()) << "query-only trace, step " << s.id << " " << s.name;
  }
  EXPECT_THROW(q->step(1'000'000'000), TraceError);
  // the statistics table lists every rule that matched, with file:line
  auto stats = t->rule_stats();
  uint64_t total = 0;
  for (const auto& r : stats) total += r.matches;
  EXPECT_EQ(total, t->match_count());
}

TEST(Recorder, SigkillLeavesReadableTrace) {
  std::string path = tmp_path("killed");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(ready[0]);
    try {
      Context ctx({{"TRACK_MATCH_STATS", 2}});
      Recorder* r = open_trace_writer(path).release();
      set_recorder(r);
      UOp a = UOp::variable("a", 0, 100);
      for (int i = 0;; i++) {
        track::Group g("loop");
        graph_rewrite((a * (i % 7 + 1) + 3).floordiv(c(i % 5 + 1)) % c(9), sym(), {.name = "spin"});
        if (i == 2000) {
          char x = 1;
          (void)!write(ready[1], &x, 1);  // well into the run: batches have been committed
        }
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "recording child: %s\n", e.what());
      _exit(3);
    }
    _exit(0);
  }
  close(ready[1]);
  char x;
  if (read(ready[0], &x, 1) != 1) {  // the child ended before its 2000th rewrite: say how
    int st = 0;
    waitpid(pid, &st, 0);
    FAIL() << "the recording child ended early: "
           << (WIFEXITED(st) ? "exit status " + std::to_string(WEXITSTATUS(st))
                             : "signal " + std::to_string(WIFSIGNALED(st) ? WTERMSIG(st) : -1));
  }
  // wait until the writer (50 ms commit period) has committed matches; a loaded machine can take a while
  for (int i = 0; i < 200; i++) {
    usleep(50 * 1000);
    try {
      auto peek = Trace::open(path);
      if (peek->contexts().size() > 0 && peek->match_count() > 0) break;
    } catch (const std::exception&) {
    }
  }
  usleep(100 * 1000);
  kill(pid, SIGKILL);
  close(ready[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  auto t = Trace::open(path);
  EXPECT_FALSE(t->complete());
  EXPECT_GT(t->contexts().size(), 0u);
  EXPECT_GT(t->match_count(), 0u);
  // every finished step of the killed run still replays
  size_t finished = 0;
  for (const auto& s : t->steps()) {
    if (!s.output_root) continue;
    StepReplay r(*t, s.id);
    EXPECT_TRUE(r.reproduces_output());
    if (++finished > 50) break;
  }
  EXPECT_GT(finished, 0u);
}

static void expect_open_error(const std::string& path, const std::string& what) {
  try {
    Trace::open(path);
    FAIL() << "opened " << path;
  } catch (const TraceError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find(what), std::string::npos) << m;
  }
}

TEST(Recorder, BadFilesGiveClearErrors) {
  std::string good = record("good", [] {
    track::Group g("g");
    graph_rewrite(UOp::variable("a", 0, 5) + 0, symbolic());
  });
  expect_open_error(tmp_path("missing"), "no such file");
  std::string empty = tmp_path("empty");
  std::ofstream(empty).close();
  expect_open_error(empty, "empty or truncated");
  std::string junk = tmp_path("junk");
  {
    std::ofstream f(junk);
    for (int i = 0; i < 100; i++) f << "this is not a database ";
  }
  expect_open_error(junk, "not an SQLite database");
  // truncated: the first pages of a real trace
  std::string trunc = tmp_path("trunc");
  {
    std::ifstream in(good, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream out(trunc, std::ios::binary);
    out.write(data.data(), std::min<size_t>(data.size(), 4096 + 2048));
  }
  try {
    auto t = Trace::open(trunc);
    for (const auto& s : t->steps()) StepReplay(*t, s.id).reproduces_output();
    ADD_FAILURE() << "a truncated trace opened and replayed";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find(trunc), std::string::npos) << e.what();
  }
  // a foreign sqlite database and a newer schema
  std::string foreign = tmp_path("foreign"), newer = tmp_path("newer");
  {
    sqlite3* db;
    sqlite3_open(foreign.c_str(), &db);
    sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1);", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    std::ifstream in(good, std::ios::binary);
    std::ofstream out(newer, std::ios::binary);
    out << in.rdbuf();
    out.close();
    sqlite3_open(newer.c_str(), &db);
    sqlite3_exec(db, "PRAGMA user_version=99;", nullptr, nullptr, nullptr);
    sqlite3_close(db);
  }
  expect_open_error(foreign, "not a tinygrad trace");
  expect_open_error(newer, "newer tinygrad-cpp (schema 99");
}

TEST(MatchStats, TableHasTheReferenceFormat) {
  Context ctx({{"TRACK_MATCH_STATS", 1}});
  track::reset_match_stats();
  UOp a = UOp::variable("a", 0, 10);
  graph_rewrite((a + 0) * 1 + (a * 2 + a * 3), symbolic());
  std::string table = track::format_match_stats();
  std::regex row(R"(^ *\d+ / +\d+ -- +\d+\.\d\d / +\d+\.\d\d ms -- \S+:\d+ +.*$)");
  std::istringstream in(table);
  std::string line;
  int rows = 0;
  bool total = false, summary = false;
  while (std::getline(in, line)) {
    if (line.find("TOTAL") != std::string::npos) total = true;
    else if (std::regex_match(line, std::regex(R"(^\d+ rules, \d+ matched once$)"))) summary = true;
    else {
      EXPECT_TRUE(std::regex_match(line, row)) << line;
      rows++;
    }
  }
  EXPECT_GT(rows, 3);
  EXPECT_TRUE(total);
  EXPECT_TRUE(summary);
  // the counters include early rejects and exclusive/inclusive time
  uint64_t matched = 0;
  for (auto& [id, v] : track::match_stats()) {
    EXPECT_EQ(v.candidates, v.early_rejects + v.attempts);
    EXPECT_LE(v.matches, v.attempts);
    matched += v.matches;
  }
  EXPECT_GT(matched, 3u);
}

// The per-step statistics read the same through the SQL view (what a sqlite3 user sees) and through the reader, and
// summed over a context's steps they give the context's totals.
TEST(Recorder, PerStepStatsAgreeAcrossViewReaderAndContextTotals) {
  UOp a = UOp::variable("a", 0, 100), b = UOp::variable("b", 0, 7);
  std::string path = record("stepstats", [&] {
    track::Group g("stats");
    for (int k = 1; k < 9; k++) {
      UOp x = ((a * k + b * 3 + 5).floordiv(c(k + 1)) + (a + b) % c(k + 2)) * 2 + a * 0;
      graph_rewrite(x, symbolic(), {.name = "symbolic"});
      graph_rewrite(x, sym(), {.name = "sym"});
    }
  });
  auto t = Trace::open(path);
  sqlite3* db;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* q;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT rule, early_rejects, attempts, matches, excl_ns, incl_ns FROM rule_stats "
                               "WHERE step=? ORDER BY rule",
                               -1, &q, nullptr),
            SQLITE_OK);
  std::map<int64_t, uint64_t> attempts_per_rule;
  size_t entries = 0, with_rejects = 0, nested = 0;
  for (const auto& s : t->steps()) {
    auto rows = t->rule_stats(s.id);
    sqlite3_bind_int64(q, 1, s.id);
    size_t i = 0;
    for (; sqlite3_step(q) == SQLITE_ROW; i++) {
      ASSERT_LT(i, rows.size());
      const RuleStatRow& r = rows[i];
      EXPECT_EQ(sqlite3_column_int64(q, 0), r.rule);
      EXPECT_EQ((uint64_t)sqlite3_column_int64(q, 1), r.early_rejects);
      EXPECT_EQ((uint64_t)sqlite3_column_int64(q, 2), r.attempts);
      EXPECT_EQ((uint64_t)sqlite3_column_int64(q, 3), r.matches);
      EXPECT_EQ(sqlite3_column_int64(q, 4), r.excl_ns);
      EXPECT_EQ(sqlite3_column_int64(q, 5), r.incl_ns);
      EXPECT_GE(r.incl_ns, r.excl_ns);
      EXPECT_GT(r.attempts, 0u);
      attempts_per_rule[r.rule] += r.attempts;
      with_rejects += r.early_rejects > 0, nested += r.incl_ns != r.excl_ns;
    }
    sqlite3_reset(q);
    EXPECT_EQ(i, rows.size()) << "step " << s.id;
    entries += i;
  }
  sqlite3_finalize(q);
  sqlite3_close(db);
  EXPECT_GT(entries, 50u);
  EXPECT_GT(with_rejects, 0u);  // both optional fields were exercised
  EXPECT_GT(nested, 0u);
  ASSERT_EQ(t->contexts().size(), 1u);
  for (const auto& r : t->rule_stats(0, t->contexts()[0].id))
    EXPECT_EQ(r.attempts, attempts_per_rule[r.rule]) << "rule " << r.rule;
}

// Threads recording at once: the same new nodes met by several threads get one id, each UOp content is written
// once, and every step of every thread replays to its output.
TEST(Recorder, ThreadsShareNodesWithoutDuplicates) {
  std::string path = record("threads", [&] {
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; t++)
      ts.emplace_back([t] {
        track::Group g("thread " + std::to_string(t));
        UOp a = UOp::variable("a", 0, 100), b = UOp::variable("b", 0, 9);
        for (int i = 0; i < 300; i++) {  // the same expressions in every thread
          UOp x = ((a * (i % 11 + 1) + b * 3 + i % 5).floordiv(c(i % 4 + 1)) + a * 0) % c(i % 13 + 2);
          graph_rewrite(x, sym(), {.name = "threaded"});
        }
      });
    for (auto& th : ts) th.join();
  });
  auto t = Trace::open(path);
  EXPECT_EQ(t->contexts().size(), 4u);
  EXPECT_EQ(t->steps().size(), 1200u);
  // node contents (op, dtype, arg, tag, source ids) are unique
  std::set<std::string> contents;
  int64_t n = (int64_t)t->uop_count();
  for (int64_t id = 1; id <= n; id++) {  // ids are dense
    const Node& nd = t->node(id);
    std::string key =
        std::string(nd.op_name) + "|" + t->dtype_name(nd.dtype) + "|" + t->str(nd.arg) + "|" + std::to_string(nd.tag);
    for (int64_t s : nd.src) key += "|" + std::to_string(s);
    EXPECT_TRUE(contents.insert(key).second) << "written twice: " << key;
  }
  EXPECT_GT(n, 50);
  for (const auto& s : t->steps()) EXPECT_TRUE(StepReplay(*t, s.id).reproduces_output()) << "step " << s.id;
}

// A node is written with the batch of the thread that numbered it first, so a row of another thread can name it
// before its row is handed over. The writer commits only when every node its rows name is written: a trace cut off
// at any commit (a full disk, a kill) names no node it lacks. Here thread B numbers x (a step it begins and does not
// end keeps its buffer), thread A records a step over x + 1 and hands its buffer over at once; until B's buffer comes
// (the writer pulls idle buffers after 50 ms), nothing that names x may be committed.
namespace {
// uop ids whose rows are committed, and every (node, src) pair among them, read through a second connection
struct Committed {
  std::set<int64_t> ids;
  std::vector<std::pair<int64_t, int64_t>> srcs;
};
Committed committed_uops(const std::string& path) {
  Committed c;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return c;
  sqlite3_stmt* q = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT id, src FROM uops", -1, &q, nullptr) == SQLITE_OK) {
    while (sqlite3_step(q) == SQLITE_ROW) {
      int64_t id = sqlite3_column_int64(q, 0);
      c.ids.insert(id);
      const unsigned char* p = (const unsigned char*)sqlite3_column_blob(q, 1);
      int n = sqlite3_column_bytes(q, 1);
      for (int i = 0; i < n;) {  // zigzag varints: id minus src id
        uint64_t v = 0;
        for (int shift = 0; i < n; shift += 7) {
          v |= (uint64_t)(p[i] & 0x7f) << shift;
          if (!(p[i++] & 0x80)) break;
        }
        int64_t delta = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
        c.srcs.push_back({id, id - delta});
      }
    }
  }
  sqlite3_finalize(q);
  sqlite3_close(db);
  return c;
}
}  // namespace

TEST(Recorder, NoCommitNamesANodeAnotherThreadHasNotHandedOver) {
  std::string path = tmp_path("handover");
  Context ctx({{"TRACK_MATCH_STATS", 2}});
  Recorder* r = open_trace_writer(path).release();
  UOp x = UOp::variable("x", 0, 100) * 7;
  std::atomic<int> phase{0};
  std::thread b([&] {
    uint64_t cb = r->context_begin("B", 0);
    r->step_begin({.context = cb, .name = "numbers x"}, x);  // x's row waits in B's buffer
    phase = 1;
    while (phase != 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (phase != 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  uint64_t ca = r->context_begin("A", 0);
  UOp y = x + 1;
  uint64_t sa = r->step_begin({.context = ca, .name = "names x"}, y);
  r->step_end(sa, &y, 1, {}, "");  // the end of a top-level step: A's buffer goes to the writer now
  // watch the file while B's buffer is still B's: no committed row may name a node whose row is not committed
  size_t seen = 0;
  for (int i = 0; i < 30; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    Committed c = committed_uops(path);
    seen = std::max(seen, c.ids.size());
    for (auto [id, s] : c.srcs) EXPECT_TRUE(c.ids.count(s)) << "uop " << id << " names uop " << s << ", not committed";
  }
  phase = 2;
  b.join();
  r->finish();
  delete r;
  // everything is there in the end, and y's row names x's
  auto t = Trace::open(path);
  EXPECT_TRUE(t->complete());
  EXPECT_EQ(t->steps().size(), 2u);
  Committed c = committed_uops(path);
  EXPECT_GE(c.ids.size(), 4u);  // x's variable, its bounds, 7, x, 1, y
  for (auto [id, s] : c.srcs) EXPECT_TRUE(c.ids.count(s));
}
