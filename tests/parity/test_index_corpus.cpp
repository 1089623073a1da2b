// The benchmark corpus doubles as a parity suite: 12000 index expressions (2831 captured from the reference while it
// compiled an MLP and a CNN training step, the rest seeded random), each rewritten with the reference's matcher must
// give exactly the reference's output graph.
#include <gtest/gtest.h>

#include "lib/uop/symbolic.h"
#include "tests/support/index_corpus.h"

using namespace tg;

TEST(IndexCorpus, EveryExpressionMatchesTheReference) {
  auto cases = load_corpus(TG_TEST_DATA "/index_corpus.txt");
  ASSERT_GE(cases.size(), 10000u);
  size_t bad = 0;
  for (size_t i = 0; i < cases.size(); i++) {
    const auto& c = cases[i];
    UOp in = decode_graph(c.in);
    UOp out = graph_rewrite(in, c.matcher == "sym" ? sym() : symbolic());
    auto got = encode_graph(out);
    if (got != c.out) {
      if (++bad <= 5) {
        std::string e, g;
        for (auto& l : c.out) e += l + "\n";
        for (auto& l : got) g += l + "\n";
        ADD_FAILURE() << "case " << i << " (" << c.matcher << ") " << in.render(false) << "\nexpected " << decode_graph(c.out).render(false)
                      << "\n" << e << "got " << out.render(false) << "\n" << g;
      }
    }
  }
  EXPECT_EQ(bad, 0u) << "of " << cases.size();
}
