// The rule DSL builds exactly the reference's pattern structures: every rule of the ported matchers, in order,
// compared with tests/parity/pattern_goldens.txt (gen_pattern_goldens.py, run against the reference).
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "lib/uop/divandmod.h"
#include "lib/uop/movement.h"
#include "lib/uop/symbolic.h"
#include "lib/uop/weak.h"

using namespace tg;

TEST(PatternParity, EveryRuleHasTheReferenceStructure) {
  std::ifstream f(TG_TEST_DATA "/pattern_goldens.txt");
  ASSERT_TRUE(f) << "missing pattern_goldens.txt";
  std::map<std::string, const PatternMatcher*> pms = {
      {"pm_data_invalid", &pm_data_invalid()},       {"pm_remove_invalid", &pm_remove_invalid()},
      {"symbolic_simple", &symbolic_simple()},       {"commutative", &commutative()},
      {"symbolic", &symbolic()},                     {"pm_simplify_valid", &pm_simplify_valid()},
      {"pm_drop_and_clauses", &pm_drop_and_clauses()}, {"pm_move_where_on_load", &pm_move_where_on_load()},
      {"pm_clean_up_group_sink", &pm_clean_up_group_sink()}, {"sym", &sym()},
      {"div_and_mod_symbolic", &div_and_mod_symbolic()}, {"mop_cleanup", &mop_cleanup()},
      {"pm_cast_weak", &pm_cast_weak()},             {"pm_commit_weak", &pm_commit_weak()},
      {"pm_lower_weak", &pm_lower_weak()},           {"pm_lower_index_dtype", &pm_lower_index_dtype()}};
  std::string line;
  int checked = 0;
  while (std::getline(f, line)) {
    if (line.rfind("matcher ", 0) != 0) continue;
    size_t sp = line.rfind(' ');
    std::string name = line.substr(8, sp - 8);
    size_t n = std::stoul(line.substr(sp + 1));
    ASSERT_TRUE(pms.count(name)) << name;
    const PatternMatcher& pm = *pms[name];
    EXPECT_EQ(pm.rules().size(), n) << "rule count of " << name;
    for (size_t i = 0; i < n && std::getline(f, line); i++) {
      if (i >= pm.rules().size()) continue;
      const RuleData& r = *pm.rules()[i];
      EXPECT_EQ(r.pat.canon(), line) << name << " rule " << i << " (" << r.file << ":" << r.src.line << ")";
      checked++;
    }
  }
  EXPECT_GE(checked, 370);
}
