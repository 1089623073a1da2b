// Every helper_test_variable case of the reference's test/null/test_uop_symbolic.py (TestSymbolic), replayed from
// goldens (tests/parity/gen_symbolic_goldens.py): the reference's input graph, rewritten with sym+pm_cast_weak, must
// give exactly the reference's output graph, vmin, vmax and rendered string.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "lib/uop/render.h"
#include "lib/uop/serialize.h"
#include "lib/uop/symbolic.h"
#include "lib/uop/weak.h"
#include "tests/support/golden_file.h"

using namespace tg;

TEST(SymbolicGoldens, AllCasesMatchReference) {
  // "case <test> <k>": in/out graphs, render, vmin, vmax (gen_symbolic_goldens.py)
  auto cases = test::load_cases(TG_TEST_DATA "/symbolic_goldens.txt", {"in", "out"});
  ASSERT_GE(cases.size(), 360u);
  static const PatternMatcher pm = sym() + pm_cast_weak();
  int failures = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    UOp in = decode_graph(c.block("in"));
    UOp out = graph_rewrite(in, pm, {.name = "simplify symbolic uop"});
    auto got = encode_graph(out);
    bool ok = got == c.block("out");
    EXPECT_EQ(encode_arg(Arg(out.vmin())), c.value("vmin"));
    EXPECT_EQ(encode_arg(Arg(out.vmax())), c.value("vmax"));
    EXPECT_EQ(out.render(false), c.value("render"));
    if (!ok) {
      failures++;
      std::string g, e;
      for (auto& l : got) g += l + "\n";
      for (auto& l : c.block("out")) e += l + "\n";
      ADD_FAILURE() << "graph differs\nexpected (" << c.value("render") << "):\n" << e << "got (" << out.render(false) << "):\n" << g;
    }
  }
  EXPECT_EQ(failures, 0);
}
