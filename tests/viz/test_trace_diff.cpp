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

#include "viz/cli.h"
#include "viz/diff.h"
#include "viz/reader.h"

using namespace tg::viz;

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
void sql(const std::string& path, const std::string& q) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, q.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << "\n" << q;
  sqlite3_free(err);
  sqlite3_close(db);
}
int64_t sql_int(const std::string& path, const std::string& q) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, q.c_str(), -1, &s, nullptr);
  int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
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
  sql(c, "UPDATE matches SET rule=" + std::to_string(other) + " WHERE step=" + std::to_string(step) + " AND ordinal=2");
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
