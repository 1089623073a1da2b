// tinyviz-cli diff: two VIZ=-1 recordings of examples/hello_tensor agree step for step (nodes compared by structure,
// not by trace id); changing the rule of one match in a copy makes that match the first divergence, named by its step
// and 1-based match number, in the library and in the CLI's --json.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/sql.h"
#include "viz/cli/cli.h"
#include "viz/reader/diff.h"
#include "viz/reader/reader.h"

using namespace tg::viz;
using tg::test::sql_exec;
using tg::test::sql_int;

namespace {

std::string tmp_path(const std::string& name) {
  return std::string(::testing::TempDir()) + "tg_diff_" + name + "_" + std::to_string(getpid()) + ".trace.db";
}
std::string record(const std::string& name) {
  std::string path = tmp_path(name);
  std::string cmd = "VIZ=-1 VIZ_PATH=" + path + " " + TG_TENSOR_BIN + " > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return path;
}
std::string cli_json(const std::string& a, const std::string& b, int* rc) {
  std::string out_path = tmp_path("out") + ".json";
  std::fflush(stdout);
  int saved = dup(1);
  FILE* f = std::fopen(out_path.c_str(), "w");
  dup2(fileno(f), 1);
  std::vector<std::string> args{"tinyviz-cli", "diff", a, b, "--json"};
  std::vector<char*> argv;
  for (auto& x : args) argv.push_back(x.data());
  argv.push_back(nullptr);
  *rc = cli_main((int)args.size(), argv.data());
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::fclose(f);
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::filesystem::remove(out_path);
  return ss.str();
}

}  // namespace

TEST(TraceDiff, TwoRecordingsAgreeAndASeededRuleChangeIsTheFirstDivergence) {
  std::string a = record("a"), b = record("b");
  {
    auto ta = Trace::open(a), tb = Trace::open(b);
    TraceDiff d = diff_traces(*ta, *tb);
    EXPECT_EQ(d.contexts_a, ta->contexts().size());
    EXPECT_EQ(d.aligned_contexts, ta->contexts().size());
    EXPECT_GT(d.aligned_steps, 100u);
    EXPECT_EQ(d.equal_steps, d.aligned_steps);
    EXPECT_FALSE(d.diverged);
    EXPECT_TRUE(d.only_a.empty() && d.only_b.empty() && d.rules.empty());
  }
  // the copy: in the step with the most matches, match 3 (ordinal 2) now names another rule (from another line)
  std::string c = tmp_path("c");
  std::filesystem::copy_file(b, c, std::filesystem::copy_options::overwrite_existing);
  int64_t step = sql_int(c, "SELECT step FROM matches GROUP BY step ORDER BY COUNT(*) DESC, step LIMIT 1");
  int64_t rule = sql_int(c, "SELECT rule FROM matches WHERE step=" + std::to_string(step) + " AND ordinal=2");
  int64_t other =
      sql_int(c, "SELECT id FROM rules WHERE line <> (SELECT line FROM rules WHERE id=" + std::to_string(rule) +
                     ") ORDER BY id LIMIT 1");
  ASSERT_GE(other, 0);  // rule ids start at 0
  EXPECT_EQ(sql_exec(c, "UPDATE matches SET rule=" + std::to_string(other) + " WHERE step=" + std::to_string(step) +
                            " AND ordinal=2"),
            "");
  auto ta = Trace::open(a), tc = Trace::open(c);
  TraceDiff d = diff_traces(*ta, *tc);
  ASSERT_TRUE(d.diverged);
  EXPECT_EQ(d.step, tc->step(step).name);
  EXPECT_EQ(d.first_b.step, step);
  EXPECT_EQ(d.first_b.ordinal, 3);
  EXPECT_EQ(d.first_a.ordinal, 3);
  auto rr = tc->rule(other);
  ASSERT_TRUE(rr);
  EXPECT_EQ(d.first_b.rule, rr->file.substr(rr->file.rfind('/') + 1) + ":" + std::to_string(rr->line));
  EXPECT_NE(d.first_a.rule, d.first_b.rule);
  EXPECT_EQ(d.equal_steps + 1, d.aligned_steps);  // only that step differs
  int rc = 0;
  nlohmann::json j = nlohmann::json::parse(cli_json(a, c, &rc));
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(j["first_divergence"]["b"]["step"].get<int64_t>(), step);
  EXPECT_EQ(j["first_divergence"]["b"]["match"].get<int64_t>(), 3);
  nlohmann::json same = nlohmann::json::parse(cli_json(a, b, &rc));
  EXPECT_EQ(rc, 0);
  EXPECT_FALSE(same.contains("first_divergence"));
  for (auto& p : {a, b, c}) std::filesystem::remove(p);
}

// A real seeded difference: run B records the same program with one rule disabled (DISABLE_RULE=file:line). The diff's
// first divergence is that rule's first match in A (in context and step order; it sits in a step nested a few levels
// below the schedule's top step, whose own match only records its result after the nested rewrites), and the aligned
// step list marks that step as differing at that match.
TEST(TraceDiff, ADisabledRulesFirstMatchIsTheFirstDivergence) {
  std::string a = record("dis_a");
  // symbolic_simple's bool folding `x | c` (found by its source, not its line): hello_tensor runs without it
  int64_t line = sql_int(a,
                         "SELECT r.line FROM rules r JOIN strings f ON f.id=r.file JOIN strings t ON t.id=r.source "
                         "WHERE f.value LIKE '%/symbolic.cpp' AND t.value LIKE "
                         "'%UPat::var(\"x\", dtypes::bool_) | UPat::cvar(\"c\")%' LIMIT 1");
  ASSERT_GT(line, 0);
  std::string b = tmp_path("dis_b");
  std::string cmd = "DISABLE_RULE=symbolic.cpp:" + std::to_string(line) + " VIZ=-1 VIZ_PATH=" + b + " " +
                    TG_TENSOR_BIN + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  // the rule's first match in A: the earliest (context, step, ordinal) that names it
  const std::string rule_first =
      "SELECT m.step, m.ordinal FROM matches m JOIN rules r ON r.id=m.rule JOIN strings f ON f.id=r.file JOIN steps s "
      "ON s.id=m.step WHERE f.value LIKE '%/symbolic.cpp' AND r.line=" +
      std::to_string(line) + " ORDER BY s.context, m.step, m.ordinal LIMIT 1";
  int64_t step = sql_int(a, "SELECT step FROM (" + rule_first + ")");
  int64_t ordinal = sql_int(a, "SELECT ordinal FROM (" + rule_first + ")");
  EXPECT_EQ(sql_int(b,
                    "SELECT COUNT(*) FROM matches m JOIN rules r ON r.id=m.rule JOIN strings f ON f.id=r.file "
                    "WHERE f.value LIKE '%/symbolic.cpp' AND r.line=" +
                        std::to_string(line)),
            0);  // B never fired it
  auto ta = Trace::open(a), tb = Trace::open(b);
  TraceDiff d = diff_traces(*ta, *tb);
  ASSERT_TRUE(d.diverged);
  EXPECT_TRUE(d.compared_rules);
  EXPECT_EQ(d.first_a.step, step);
  EXPECT_EQ(d.first_a.ordinal, ordinal + 1);
  EXPECT_EQ(d.first_a.rule, "symbolic.cpp:" + std::to_string(line));
  EXPECT_NE(d.first_b.rule, d.first_a.rule);
  EXPECT_EQ(d.step, ta->step(step).name);
  // the aligned list: every step before it in order is equal or only an ancestor of it; it differs at that match
  bool found = false;
  for (const ContextPair& cp : d.pairs)
    for (const StepPair& sp : cp.steps)
      if (sp.a == step) {
        found = true;
        EXPECT_EQ(sp.status, DiffStatus::differs);
        EXPECT_EQ(sp.at, ordinal + 1);
        EXPECT_EQ(sp.b, d.first_b.step);
      }
  EXPECT_TRUE(found);
  int rc = 0;
  nlohmann::json j = nlohmann::json::parse(cli_json(a, b, &rc));
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(j["first_divergence"]["a"]["step"].get<int64_t>(), step);
  EXPECT_EQ(j["first_divergence"]["a"]["match"].get<int64_t>(), ordinal + 1);
  EXPECT_EQ(j["first_divergence"]["a"]["rule"].get<std::string>(), "symbolic.cpp:" + std::to_string(line));
  // compared by nodes only (as against an imported reference trace): another rule of B rewrites the same node to the
  // same result, so by nodes that match agrees, and no step that was equal by rule becomes different
  TraceDiff n = diff_traces(*ta, *tb, DiffOptions{false});
  EXPECT_FALSE(n.compared_rules);
  EXPECT_GE(n.equal_steps, d.equal_steps);
  EXPECT_EQ(n.aligned_steps, d.aligned_steps);
  for (const ContextPair& cp : n.pairs)
    for (const StepPair& sp : cp.steps)
      if (sp.a == step) EXPECT_EQ(sp.status, DiffStatus::equal);
  for (auto& p : {a, b}) std::filesystem::remove(p);
}

// DISABLE_RULE takes file:line; anything else stops the program with a message naming the variable
TEST(TraceDiff, DisableRuleRejectsWhatIsNotFileLine) {
  std::string out = tmp_path("bad_env") + ".txt";
  std::string cmd = std::string("DISABLE_RULE=symbolic.cpp ") + TG_TENSOR_BIN + " > " + out + " 2>&1";
  int rc = std::system(cmd.c_str());
  EXPECT_NE(rc, 0);
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("DISABLE_RULE: 'symbolic.cpp' is not file:line"), std::string::npos) << ss.str();
  std::filesystem::remove(out);
}

// Nodes are compared by their structure: op, dtype, arg, tag and sources in order. A copy of a recording where one
// match's result node differs only in its dtype, only in its arg, or only in the order of its sources is a different
// node there, and the diff diverges; the unchanged copy does not.
TEST(TraceDiff, ANodeThatDiffersOnlyInDtypeArgOrSourceOrderDiffers) {
  std::string a = record("shape_a");
  auto ta = Trace::open(a);
  // a match whose result has two different sources, and another node of its op with another arg
  int64_t node = 0, other_arg = 0;
  for (const auto& s : ta->steps()) {
    for (const auto& m : ta->matches(s.id)) {
      const Node& n = ta->node(m.after);
      if (n.src.size() == 2 && n.src[0] != n.src[1] && n.op_name == "ADD") {
        node = m.after;
        break;
      }
    }
    if (node) break;
  }
  ASSERT_NE(node, 0) << "no ADD of two sources is the result of a match";
  const Node& n = ta->node(node);
  other_arg = sql_int(a, "SELECT arg FROM uops WHERE arg <> " + std::to_string(n.arg) + " ORDER BY id LIMIT 1");
  int64_t other_dtype = sql_int(a, "SELECT id FROM dtypes WHERE id <> " + std::to_string(n.dtype) + " ORDER BY id LIMIT 1");
  // the src blob reversed: zigzag varints of (node - src), one byte each for these small deltas
  int64_t d0 = node - n.src[0], d1 = node - n.src[1];
  ASSERT_TRUE(d0 < 64 && d1 < 64);
  char hex[16];
  std::snprintf(hex, sizeof hex, "%02X%02X", (int)(d1 << 1), (int)(d0 << 1));
  std::string id = std::to_string(node);
  for (auto [what, sql] : std::vector<std::pair<std::string, std::string>>{
           {"unchanged", ""},
           {"dtype", "UPDATE uops SET dtype=" + std::to_string(other_dtype) + " WHERE id=" + id},
           {"arg", "UPDATE uops SET arg=" + std::to_string(other_arg) + " WHERE id=" + id},
           {"source order", "UPDATE uops SET src=X'" + std::string(hex) + "' WHERE id=" + id}}) {
    SCOPED_TRACE(what);
    std::string c = tmp_path("shape_c");
    std::filesystem::copy_file(a, c, std::filesystem::copy_options::overwrite_existing);
    if (!sql.empty()) ASSERT_EQ(sql_exec(c, sql), "");
    auto tc = Trace::open(c);
    if (what == "source order") ASSERT_EQ(tc->node(node).src, (std::vector<int64_t>{n.src[1], n.src[0]}));
    NodeShapes sa(*ta), sc(*tc);
    EXPECT_EQ(sa.of(node) == sc.of(node), what == "unchanged");
    TraceDiff d = diff_traces(*ta, *tc);
    EXPECT_EQ(d.diverged, what != "unchanged");
    std::filesystem::remove(c);
  }
  std::filesystem::remove(a);
}
