// The kernel-count assertions of the reference's test/null/test_schedule.py (check_schedule(t, allowed)), on the big
// SINK each assertion scheduled in the reference (tests/data/schedule_count_goldens.txt, from
// gen_schedule_count_goldens.py; DEV=NULL as that file runs). Our create_linear_with_vars must give the reference's
// count (which is the asserted one except for the cases that assert a KernelCountException), and the reference's whole
// LINEAR (kernel ASTs, buffer args, memory plan; new_buffer numbers renumbered as in test_schedule_goldens).
#include <gtest/gtest.h>

#include <map>

#include "lib/helpers.h"
#include "lib/schedule/schedule.h"
#include "lib/uop/serialize.h"
#include "tests/support/golden_file.h"
#include "tests/support/schedule_goldens.h"

using namespace tg;

namespace {

struct CountCase {
  int id = 0;
  std::string test;
  int nth = 0;
  int allowed = 0;
  std::string ref;  // the reference's count, or "error"
  bool filter = true;
  std::vector<std::pair<std::string, long long>> ctx;  // the scheduler's ContextVars when the check ran
  UOp big_sink;
  UOp linear;  // the reference's LINEAR (memory planned)
};

std::vector<CountCase> load(const std::string& path) {
  test::GoldenFile f(path, test::GoldenFile::kNodePool);
  Context no_spec({{"SPEC", 0}});  // SPEC=2 tests the scheduler, not the decoding of the reference's graphs
  std::vector<CountCase> cs;
  while (f.next()) {
    std::vector<std::string> w = f.words();
    if (f.is("case")) {  // case <id> <test> <n>
      f.clear_pool();
      if (w.size() != 4) f.fail("expected: case <id> <test> <n>");
      cs.push_back({.id = std::stoi(w[1]), .test = w[2], .nth = std::stoi(w[3])});
      continue;
    }
    if (cs.empty()) f.fail("a record before the first case");
    CountCase& c = cs.back();
    if (f.is("allowed")) {  // allowed <n> ref <n|error> filter <0|1>
      if (w.size() != 6) f.fail("expected: allowed <n> ref <n> filter <0|1>");
      c.allowed = std::stoi(w[1]);
      c.ref = w[3];
      c.filter = w[5] != "0";
    } else if (f.is("ctx"))
      c.ctx = test::key_values(f.rest());
    else if (f.is("big_sink"))
      c.big_sink = f.node(f.rest());
    else if (f.is("linear"))
      c.linear = f.node(f.rest());
    else
      f.unknown();
  }
  return cs;
}

const std::vector<CountCase>& cases() {
  static const std::vector<CountCase> c = load(TG_TEST_DATA "/schedule_count_goldens.txt");
  return c;
}


int kernel_count(const UOp& linear, bool filter_sink) {
  int n = 0;
  for (const UOp& call : linear.src()) {
    if (filter_sink && call.src(0).op() != Ops::SINK) continue;
    Arg d = call.device();
    n += d.is_tuple() ? (int)d.size() : 1;
  }
  return n;
}

}  // namespace

TEST(ScheduleCounts, Loaded) { ASSERT_GE(cases().size(), 250u); }

// every check_schedule of test_schedule.py: our kernel count is the reference's
TEST(ScheduleCounts, KernelCounts) {
  int total = 0, ok = 0, errors = 0, asserted = 0, multi = 0, same_linear = 0;
  std::map<std::string, int> failed_tests;
  for (const auto& c : cases()) {
    if (c.ref == "error") continue;
    SCOPED_TRACE(c.test + " #" + std::to_string(c.nth));
    if (multi_device(c.big_sink)) {
      multi++;
      continue;
    }
    total++;
    asserted += std::stoi(c.ref) == c.allowed;
    std::vector<std::pair<ContextVar*, int64_t>> saved;
    for (const auto& [k, v] : c.ctx) {
      ContextVar* cv = ContextVar::find(k);
      ASSERT_NE(cv, nullptr) << k;
      saved.emplace_back(cv, cv->value());
      cv->set(v);
    }
    try {
      LinearWithVars lv = create_linear_with_vars(c.big_sink);
      int n = kernel_count(lv.linear, c.filter);
      if (c.linear && normalized(lv.linear, c.big_sink) == normalized(c.linear, c.big_sink))
        same_linear++;
      else
        ADD_FAILURE() << "LINEAR differs from the reference's";
      if (n == std::stoi(c.ref))
        ok++;
      else
        ADD_FAILURE() << "kernels: reference " << c.ref << " (asserted " << c.allowed << "), ours " << n;
    } catch (const std::exception& e) {
      errors++;
      ADD_FAILURE() << "error: " << e.what();
    }
    for (auto& [cv, v] : saved) cv->set(v);
  }
  std::printf(
      "[ counts ] %d/%d check_schedule cases give the reference's kernel count (%d errors; %d cases where the "
      "reference met the asserted count; %d multi-device cases out of scope)\n"
      "[ counts ] %d/%d give the reference's whole LINEAR (kernel ASTs, buffers, memory plan)\n",
      ok, total, errors, asserted, multi, same_linear, total);
  EXPECT_GE(total, 250);
}
