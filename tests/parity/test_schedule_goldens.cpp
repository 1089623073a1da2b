// The scheduler against the reference, schedule by schedule (tests/data/schedule_goldens.txt, from
// gen_schedule_goldens.py: the big SINK ~90 small tensor programs hand to create_linear_with_vars):
//   * every tracked graph_rewrite (and the get_kernel_graph / run_rangeify steps) has the reference's name, depth and
//     flags, in order (the function-cached "reshape"/"pad" steps of apply_movement_op are left out on both sides);
//   * the kernel graph get_kernel_graph returns equals the reference's;
//   * the LINEAR before memory planning and the final LINEAR equal the reference's (kernel count, kernel ASTs, buffer
//     args and sizes, arena sizes and offsets). Buffers made by UOp.new_buffer during scheduling take the next number
//     of a process-wide counter, so on both sides those numbers are renumbered in order of first appearance;
//   * var_vals and the trace context name ("Schedule N Kernels") match.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "lib/recorder.h"
#include "lib/schedule/schedule.h"
#include "lib/uop/serialize.h"
#include "tests/parity/step_recorder.h"
#include "tests/support/golden_file.h"
#include "tests/support/schedule_goldens.h"

using namespace tg;

namespace {

using tg::test::join_lines;

const std::vector<SchedCase>& goldens() {
  static const std::vector<SchedCase> g = load_schedule_goldens(TG_TEST_DATA "/schedule_goldens.txt");
  return g;
}

struct Result {
  std::string error;
  LinearWithVars lv;
  std::vector<std::string> steps;
  std::vector<UOp> step_outs;  // parallel to steps
  std::vector<std::string> rangeify_debug;
  std::vector<UOp> kernel_graphs;
  UOp unplanned;
  std::string context;
};

bool cached_step(const std::string& name) { return name == "reshape" || name == "pad"; }

const Result& run(const SchedCase& c) {
  static std::map<int, Result> cache;
  if (auto it = cache.find(c.id); it != cache.end()) return it->second;
  Result& r = cache[c.id];
  static StepRecorder* rec = new StepRecorder();  // outlives the exit handler
  rec->clear();
  set_recorder(rec);
  std::vector<std::pair<ContextVar*, int64_t>> saved;
  for (const auto& [k, v] : c.ctx) {
    ContextVar* cv = ContextVar::find(k);
    if (!cv) throw std::runtime_error("no ContextVar " + k);
    saved.emplace_back(cv, cv->value());
    cv->set(v);
  }
  testing::internal::CaptureStdout();
  try {
    Context ctx({{"TRACK_MATCH_STATS", 2}, {"SCACHE", 0}, {"VIZ", 0}, {"DEBUG_RANGEIFY", 1}});
    r.lv = create_linear_with_vars(c.big_sink);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  std::string out = testing::internal::GetCapturedStdout();
  for (size_t p = 0; p < out.size();) {
    size_t e = out.find('\n', p);
    std::string l = out.substr(p, e == std::string::npos ? std::string::npos : e - p), esc;
    for (char ch : l) esc += ch == '\x1b' ? std::string("\\x1b") : std::string(1, ch);
    r.rangeify_debug.push_back(esc);
    p = e == std::string::npos ? out.size() : e + 1;
  }
  for (auto& [cv, v] : saved) cv->set(v);
  set_recorder(nullptr);
  r.context = rec->context_name;
  for (const auto& s : rec->steps) {
    if (s.name == "get_kernel_graph" && s.out) r.kernel_graphs.push_back(s.out);
    if (s.name == "create COPY kernels for SDMA" && s.out) r.unplanned = s.out;
    if (!cached_step(s.name)) {
      r.steps.push_back(std::to_string(s.depth + 1) + " " + s.flags + " " + s.name);
      r.step_outs.push_back(s.out);
    }
  }
  return r;
}

std::vector<std::string> golden_steps(const SchedCase& c) {
  std::vector<std::string> r;
  for (const auto& s : c.steps) {
    size_t a = s.find(' '), b = s.find(' ', a + 1);
    if (!cached_step(s.substr(b + 1))) r.push_back(s);
  }
  return r;
}

std::string first_diff(const std::vector<std::string>& want, const std::vector<std::string>& got) {
  for (size_t i = 0; i < std::max(want.size(), got.size()); i++) {
    std::string w = i < want.size() ? want[i] : "<end>", g = i < got.size() ? got[i] : "<end>";
    if (w != g) return "line " + std::to_string(i) + "\n  want: " + w + "\n  got:  " + g;
  }
  return "";
}

struct Tally {
  std::string what;
  int total = 0, ok = 0;
  ~Tally() { std::printf("[ schedule ] %-40s %d/%d match\n", what.c_str(), ok, total); }
};

template <typename F>
void each(F f) {
  for (const auto& c : goldens()) {
    if (!c.error.empty()) continue;
    SCOPED_TRACE("case " + std::to_string(c.id) + " " + c.prog + " #" + std::to_string(c.nth));
    f(c, run(c));
  }
}

}  // namespace

// FUNCTION values read through GETTUPLE (uop/ops.py _shape: the TUPLE element's shape, PARAMs substituted by the
// args) are scheduled like every other program; the checks above include them, this one makes sure they are there
TEST(ScheduleGoldens, FunctionPrograms) {
  int n = 0;
  for (const auto& c : goldens()) {
    if (c.prog != "function_call" && c.prog != "function_tuple" && c.prog != "function_twice") continue;
    n++;
    const Result& r = run(c);
    EXPECT_EQ(r.error, c.error) << c.prog;
  }
  std::printf("[ schedule ] %d programs with FUNCTION values through GETTUPLE\n", n);
  EXPECT_EQ(n, 3);
}

TEST(ScheduleGoldens, Loaded) {
  ASSERT_GE(goldens().size(), 80u);
  for (const auto& c : goldens()) ASSERT_TRUE(c.big_sink) << c.id;
}

TEST(ScheduleGoldens, NoErrors) {
  Tally t{"scheduled without error"};
  each([&](const SchedCase&, const Result& r) {
    t.total++;
    if (r.error.empty())
      t.ok++;
    else
      ADD_FAILURE() << r.error;
  });
}

TEST(ScheduleGoldens, Steps) {
  Tally t{"trace steps (name, depth, flags)"};
  each([&](const SchedCase& c, const Result& r) {
    if (!r.error.empty()) return;
    t.total++;
    std::string d = first_diff(golden_steps(c), r.steps);
    if (d.empty())
      t.ok++;
    else
      ADD_FAILURE() << d << "\nwant:\n" << join_lines(golden_steps(c)) << "\ngot:\n" << join_lines(r.steps);
  });
}

// the graph every step returned (BUFFER numbers from new_buffer renumbered): the first divergence is reported
TEST(ScheduleGoldens, StepGraphs) {
  Tally t{"graph after every step"};
  size_t graphs = 0;
  each([&](const SchedCase& c, const Result& r) {
    if (!r.error.empty()) return;
    t.total++;
    std::map<int, UOp> want;
    for (const auto& [i, g] : c.step_outs) want[i] = g;
    size_t k = 0;  // index into our (uncached) steps
    for (size_t i = 0; i < c.steps.size(); i++) {
      const std::string& s = c.steps[i];
      if (cached_step(s.substr(s.find(' ', s.find(' ') + 1) + 1))) continue;
      if (k >= r.step_outs.size()) {
        ADD_FAILURE() << "missing step " << s;
        return;
      }
      auto it = want.find((int)i);
      if (it != want.end()) {
        graphs++;
        if (!r.step_outs[k]) {
          ADD_FAILURE() << "step " << s << ": no output recorded";
          return;
        }
        std::string d = first_diff(normalized(it->second, c.big_sink), normalized(r.step_outs[k], c.big_sink));
        if (!d.empty()) {
          ADD_FAILURE() << "step " << i << " '" << s << "': " << d;
          return;
        }
      }
      k++;
    }
    t.ok++;
  });
  std::printf("[ schedule ] %zu step graphs compared\n", graphs);
  EXPECT_GT(graphs, 1500u);
}

// run_rangeify's DEBUG_RANGEIFY=1 report (every node: realized or not, consumers, ending ranges, ranges in -> out)
TEST(ScheduleGoldens, RangeifyDebug) {
  Tally t{"run_rangeify's DEBUG_RANGEIFY report"};
  size_t lines = 0;
  each([&](const SchedCase& c, const Result& r) {
    if (!r.error.empty()) return;
    t.total++;
    lines += c.rangeify_debug.size();
    std::string d = first_diff(c.rangeify_debug, r.rangeify_debug);
    if (d.empty())
      t.ok++;
    else
      ADD_FAILURE() << d;
  });
  std::printf("[ schedule ] %zu DEBUG_RANGEIFY lines compared\n", lines);
  EXPECT_GT(lines, 1000u);
}

TEST(ScheduleGoldens, KernelGraph) {
  Tally t{"kernel graph (get_kernel_graph)"};
  each([&](const SchedCase& c, const Result& r) {
    if (!r.error.empty()) return;
    t.total++;
    if (c.kernel_graphs.size() != r.kernel_graphs.size()) {
      ADD_FAILURE() << "get_kernel_graph calls: want " << c.kernel_graphs.size() << " got " << r.kernel_graphs.size();
      return;
    }
    for (size_t i = 0; i < c.kernel_graphs.size(); i++) {
      std::string d = first_diff(encode_graph(c.kernel_graphs[i]), encode_graph(r.kernel_graphs[i]));
      if (!d.empty()) {
        ADD_FAILURE() << "kernel graph " << i << ": " << d;
        return;
      }
    }
    t.ok++;
  });
}

TEST(ScheduleGoldens, LinearBeforeMemoryPlan) {
  Tally t{"LINEAR before memory planning"};
  each([&](const SchedCase& c, const Result& r) {
    if (!r.error.empty() || !c.linear_unplanned) return;
    t.total++;
    if (!r.unplanned) {
      ADD_FAILURE() << "no LINEAR recorded";
      return;
    }
    std::string d = first_diff(normalized(c.linear_unplanned, c.big_sink), normalized(r.unplanned, c.big_sink));
    if (d.empty())
      t.ok++;
    else
      ADD_FAILURE() << d;
  });
}

TEST(ScheduleGoldens, Linear) {
  Tally t{"final LINEAR (memory planned)"};
  Tally k{"kernel count"};
  each([&](const SchedCase& c, const Result& r) {
    if (!r.error.empty()) return;
    t.total++, k.total++;
    if (c.linear.nsrc() == r.lv.linear.nsrc())
      k.ok++;
    else
      ADD_FAILURE() << "kernels: want " << c.linear.nsrc() << " got " << r.lv.linear.nsrc();
    std::string d = first_diff(normalized(c.linear, c.big_sink), normalized(r.lv.linear, c.big_sink));
    if (d.empty())
      t.ok++;
    else
      ADD_FAILURE() << d;
  });
}

TEST(ScheduleGoldens, VarValsAndContext) {
  Tally t{"var_vals and context name"};
  each([&](const SchedCase& c, const Result& r) {
    if (!r.error.empty()) return;
    t.total++;
    std::vector<std::pair<std::string, long long>> got;
    for (const auto& [k, v] : r.lv.var_vals) got.emplace_back(k, (long long)v);
    auto want = c.vars;
    std::sort(want.begin(), want.end());
    bool ok = got == want;
    EXPECT_EQ(got.size(), want.size());
    // the context is "<name> n<k>": compare the name
    std::string ctx = r.context.substr(0, r.context.rfind(" n"));
    if (ctx != c.context) ok = false, ADD_FAILURE() << "context: want " << c.context << " got " << r.context;
    if (ok) t.ok++;
  });
}

// schedules the reference refuses (test_assign.py's cycles) fail here with the same message (first line)
TEST(ScheduleGoldens, ReferenceErrors) {
  Tally t{"reference errors reproduced"};
  for (const auto& c : goldens()) {
    if (c.error.empty()) continue;
    SCOPED_TRACE("case " + std::to_string(c.id) + " " + c.prog + ": " + c.error);
    t.total++;
    const Result& r = run(c);
    std::string want = c.error.substr(c.error.find(": ") + 2), got = r.error.substr(0, r.error.find('\n'));
    if (!r.error.empty() && got == want)
      t.ok++;
    else
      ADD_FAILURE() << "got: " << (r.error.empty() ? "no error" : got);
  }
  EXPECT_GE(t.total, 3);
}
