// The codegen rule tables have the reference's pattern structures: every rule of every ported codegen matcher, in
// order, compared with tests/data/codegen_pattern_goldens.txt (gen_codegen_pattern_goldens.py). The decomposition
// tables are built per op set; the CPU renderers' code_for_op keys are the reference's.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>

#include "lib/codegen/codegen.h"
#include "lib/codegen/decomp/dtype.h"
#include "lib/codegen/decomp/op.h"
#include "lib/codegen/decomp/transcendental.h"
#include "lib/codegen/gpudims.h"
#include "lib/codegen/late/coalesce.h"
#include "lib/codegen/late/gater.h"
#include "lib/schedule/indexing.h"
#include "lib/schedule/rangeify.h"
#include "lib/codegen/simplify.h"
#include "lib/renderer/cstyle.h"
#include "lib/renderer/llvmir.h"
#include "lib/uop/symbolic.h"
#include "lib/uop/weak.h"
#include "tests/support/pattern_goldens.h"

using namespace tg;

namespace {
std::vector<Ops> parse_ops(const std::string& s) {
  std::vector<Ops> r;
  for (const std::string& name : test::split(s, ',')) r.push_back(op_from_name(name));
  return r;
}
std::vector<std::string> names(std::vector<Ops> v) {
  std::vector<std::string> r;
  for (Ops o : v) r.push_back(op_name(o));
  std::sort(r.begin(), r.end());
  return r;
}
}  // namespace

TEST(CodegenPatternParity, EveryRuleHasTheReferenceStructure) {
  // UPat.cvar is functools.cache'd in the reference, and 1 == True share a cache key: which of the two args a pattern
  // records depends on construction order. The reference imports uop/symbolic before codegen; build them first here too
  (void)sym();
  (void)pm_lower_index_dtype();
  std::map<std::string, std::vector<Ops>> ops;
  std::map<std::string, std::function<const PatternMatcher&()>> pms = {
      {"pm_flatten_range", pm_flatten_range},
      {"pm_simplify_ranges", pm_simplify_ranges},
      {"pm_split_ranges", pm_split_ranges},
      {"pm_reduce_unparented", pm_reduce_unparented},
      {"pm_reduce_collapse", pm_reduce_collapse},
      {"pm_reduce_load_collapse", pm_reduce_load_collapse},
      {"pm_reduce_simplify", pm_reduce_simplify},
      {"pm_load_collapse", pm_load_collapse},
      {"pm_add_gpudims", pm_add_gpudims},
      {"pm_move_gates_from_index", pm_move_gates_from_index},
      {"indexing_simplify", indexing_simplify},
      {"pm_simplify_add_image", pm_simplify_add_image},
      {"pm_dtype_decomps", pm_dtype_decomps},
      {"pm_float_decomp", pm_float_decomp},
      {"pm_mops", pm_mops},
      {"pm_number_params", pm_number_params},
      {"expander2", expander2},
      {"pm_wmma_add", pm_wmma_add},
      {"pm_expand_broadcast", pm_expand_broadcast},
      {"ew_devectorizer", ew_devectorizer},
      {"devectorizer2", devectorizer2},
      {"pm_reduce_local", pm_reduce_local},
      {"pm_add_loads", pm_add_loads},
      {"pm_add_local_buffers", pm_add_local_buffers},
      {"pm_cast_float_alu", pm_cast_float_alu},
      {"pm_implicit_barriers", pm_implicit_barriers},
      {"pm_casted_consts", pm_casted_consts}};
  PatternGoldens g = load_pattern_goldens(TG_TEST_DATA "/codegen_pattern_goldens.txt");
  for (const auto& [rn, names] : g.ops) ops[rn] = parse_ops(names);
  int checked = 0, matchers = 0;
  for (const auto& [name, canon] : g.matchers) {
    const PatternMatcher* pm = nullptr;
    if (auto it = pms.find(name); it != pms.end())
      pm = &it->second();
    else {
      // name[renderer(,flag)]
      size_t lb = name.find('['), comma = name.find(',', lb), rb = name.find(']');
      std::string fn = name.substr(0, lb), rn = name.substr(lb + 1, (comma == std::string::npos ? rb : comma) - lb - 1);
      bool flag = comma != std::string::npos && name[comma + 1] == '1';
      std::vector<Ops> o = rn == "none" ? std::vector<Ops>{} : ops.at(rn);
      if (fn == "get_simplifying_rewrite_patterns")
        pm = &get_simplifying_rewrite_patterns(o);
      else if (fn == "get_late_rewrite_patterns")
        pm = &get_late_rewrite_patterns(o, flag);
      else if (fn == "get_transcendental_patterns")
        pm = &get_transcendental_patterns(o, flag);
    }
    ASSERT_NE(pm, nullptr) << name;
    matchers++;
    checked += expect_reference_rules(name, *pm, canon);
  }
  EXPECT_GE(matchers, 47);
  EXPECT_GE(checked, 500);
  // the op sets the decomposition tables are built for are the renderers' code_for_op keys
  ClangRenderer clang(Target{"CPU", "CLANG", "x86_64,native", "", ""});
  CPULLVMRenderer llvm(Target{"CPU", "LLVM", "x86_64,native", "", ""});
  EXPECT_EQ(names(clang.code_for_op.keys()), names(ops.at("clang")));
  EXPECT_EQ(names(llvm.code_for_op.keys()), names(ops.at("llvm")));
}
