// Transcribed from the reference's test/null/test_rewrite_bottom_up_gate.py.
#include <gtest/gtest.h>

#include "lib/uop/rewrite.h"

using namespace tg;

TEST(TestBottomUpGate, test_basic_bottom_up_gate) {
  PatternMatcher pm("t", {
    TG_RULE(UPat(Ops::ADD), []() -> UOp { throw BottomUpGate(); }),
    TG_RULE(UPat(Ops::MUL), []() -> UOp {
      ADD_FAILURE() << "This function should not be reached";
      return UOp();
    }),
  });
  UOp a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10), c = UOp::variable("c", 0, 10);
  UOp g = (a * a) + (b * c);
  EXPECT_EQ(graph_rewrite(g, pm, {.bottom_up = true}), g);
}

TEST(TestBottomUpGate, test_bottom_up_gate_with_rewriting) {
  PatternMatcher pm("t", {
    TG_RULE(UPat::var("a") + UPat::var("a"), [](UOp a) { return a.mul(UOp::const_(PyConst(2)), true); }),
    TG_RULE(UPat(Ops::MUL), []() -> UOp { throw BottomUpGate(); }),
    TG_RULE(UPat(Ops::CONST), []() -> UOp {
      ADD_FAILURE() << "This function should not be reached";
      return UOp();
    }),
  });
  UOp a = UOp::variable("a", 0, 10);
  EXPECT_EQ(graph_rewrite(a + a, pm, {.bottom_up = true}), a.mul(UOp::const_(PyConst(2)), true));
}
