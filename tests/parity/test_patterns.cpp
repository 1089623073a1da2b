// The rule DSL builds exactly the reference's pattern structures: every rule of the ported matchers, in order,
// compared with tests/data/pattern_goldens.txt (gen_pattern_goldens.py, run against the reference).
#include <gtest/gtest.h>

#include <map>

#include "lib/uop/divandmod.h"
#include "lib/uop/movement.h"
#include "lib/uop/symbolic.h"
#include "lib/uop/weak.h"
#include "tests/support/pattern_goldens.h"

using namespace tg;

TEST(PatternParity, EveryRuleHasTheReferenceStructure) {
  std::map<std::string, const PatternMatcher*> pms = {
      {"pm_data_invalid", &pm_data_invalid()},       {"pm_remove_invalid", &pm_remove_invalid()},
      {"symbolic_simple", &symbolic_simple()},       {"commutative", &commutative()},
      {"symbolic", &symbolic()},                     {"pm_simplify_valid", &pm_simplify_valid()},
      {"pm_drop_and_clauses", &pm_drop_and_clauses()}, {"pm_move_where_on_load", &pm_move_where_on_load()},
      {"pm_clean_up_group_sink", &pm_clean_up_group_sink()}, {"sym", &sym()},
      {"div_and_mod_symbolic", &div_and_mod_symbolic()}, {"mop_cleanup", &mop_cleanup()},
      {"pm_cast_weak", &pm_cast_weak()},             {"pm_commit_weak", &pm_commit_weak()},
      {"pm_lower_weak", &pm_lower_weak()},           {"pm_lower_index_dtype", &pm_lower_index_dtype()}};
  int checked = 0;
  for (const auto& [name, canon] : load_pattern_goldens(TG_TEST_DATA "/pattern_goldens.txt").matchers) {
    ASSERT_TRUE(pms.count(name)) << name;
    checked += expect_reference_rules(name, *pms[name], canon);
  }
  EXPECT_GE(checked, 370);
}
