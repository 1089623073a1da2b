// The scheduler's rule tables have the reference's pattern structures: every rule of every ported schedule matcher,
// in order, compared with tests/data/schedule_pattern_goldens.txt (gen_schedule_pattern_goldens.py).
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "lib/schedule/indexing.h"
#include "lib/schedule/rangeify.h"
#include "lib/schedule/schedule.h"
#include "lib/uop/symbolic.h"
#include "tests/support/pattern_goldens.h"

using namespace tg;

TEST(SchedulePatternParity, EveryRuleHasTheReferenceStructure) {
  (void)sym();  // the reference imports uop/symbolic first (UPat.cvar's cache, see test_codegen_patterns.cpp)
  std::map<std::string, std::function<const PatternMatcher&()>> pms = {
      {"pm_fold_moved_after", pm_fold_moved_after},
      {"pm_mops", pm_mops},
      {"earliest_rewrites", earliest_rewrites},
      {"pm_gate_substitute", pm_gate_substitute},
      {"pm_const_buffer_folding", pm_const_buffer_folding},
      {"pm_remove_bufferize", pm_remove_bufferize},
      {"pm_no_indexing_calls", pm_no_indexing_calls},
      {"pm_limit_bufs", pm_limit_bufs},
      {"pm_flatten_bufferize", pm_flatten_bufferize},
      {"pm_add_buffers", pm_add_buffers},
      {"to_define_global", to_define_global},
      {"rangeify_codegen", rangeify_codegen},
      {"pm_add_param_range_tags", pm_add_param_range_tags},
      {"split_kernels", split_kernels},
      {"pm_copy_to_store", pm_copy_to_store},
      {"pm_generate_realize_map", pm_generate_realize_map},
      {"pm_apply_rangeify", pm_apply_rangeify},
      {"pm_fix_deviceless", pm_fix_deviceless},
      {"pm_post_sched_cache", pm_post_sched_cache},
      {"pm_resolve_linear_call", pm_resolve_linear_call},
      {"pm_schedule", pm_schedule},
      {"pm_copy_from_store", pm_copy_from_store},
      {"pm_flatten_linear", pm_flatten_linear}};
  int checked = 0, matchers = 0;
  for (const auto& [name, canon] : load_pattern_goldens(TG_TEST_DATA "/schedule_pattern_goldens.txt").matchers) {
    auto it = pms.find(name);
    ASSERT_NE(it, pms.end()) << name;
    matchers++;
    checked += expect_reference_rules(name, it->second(), canon);
  }
  std::printf("[ patterns ] %d rules of %d scheduler matchers compared\n", checked, matchers);
  EXPECT_EQ(matchers, (int)pms.size());
}
