// Transcribed from the reference's test/null/test_pattern_matcher.py.
#include <gtest/gtest.h>

#include "lib/uop/upat.h"

using namespace tg;
using BoolMatcher = BasicPatternMatcher<std::optional<bool>>;

static UOp cf(double v) { return UOp::const_(PyConst(v)); }
static UOp ci(int v) { return UOp::const_(PyConst(v)); }

TEST(TestPatternMatcher, test_simple_match) {
  PatternMatcher matcher("t", {TG_RULE(UPat(Ops::CONST).named("x").dtype(dtypes::weakfloat), [](UOp x) { return x.rtag(); })});
  UOp c1 = cf(1.0), c2 = ci(1);
  EXPECT_EQ(matcher.rewrite(c1), c1.rtag());
  EXPECT_FALSE(matcher.rewrite(c2));
}

TEST(TestPatternMatcher, test_upat_any) {
  // x, y, z: only the bound alternative is passed, the others are None
  PatternMatcher matcher("t", {TG_RULE(UPat::var("a") + UPat::any(UPat::var("x"), UPat::var("y"), UPat::var("z")),
                                       [](UOp a, UOp x, UOp y, UOp z) { return y ? (a + y).rtag() : UOp(); })});
  UOp v1 = UOp::variable("a", 0, 10), v2 = UOp::variable("b", 0, 10);
  UOp c1 = v1 + v2;
  EXPECT_EQ(matcher.rewrite(c1), c1.rtag());
}

TEST(TestPatternMatcherSemantics, const_reference_params_borrow_the_bound_nodes) {
  // a `const UOp&` parameter borrows the bound node (no reference taken), an unbound alternative is a null UOp, and a
  // rule returning a borrowed parameter hands out a real reference
  PatternMatcher matcher("t", {TG_RULE(UPat::var("a") + UPat::any(UPat::var("x"), UPat::var("y")),
                                       [](const UOp& a, const UOp& x, const UOp& y) -> UOp {
                                         EXPECT_TRUE(x);
                                         EXPECT_FALSE(y);
                                         return x;
                                       })});
  UOp v1 = UOp::variable("borrow_a", 0, 10);
  UOp out;
  {
    UOp v2 = UOp::variable("borrow_b", 0, 10);
    out = matcher.rewrite(v1 + v2);
    EXPECT_EQ(out, v2);
  }
  // still alive through out alone: the same variable is the same node
  EXPECT_EQ(out, UOp::variable("borrow_b", 0, 10));
  EXPECT_EQ(out.expr(), "borrow_b");
}

TEST(TestPatternMatcher, test_minimum_len) {
  BoolMatcher matcher("t", {TG_RULE(UPat(Ops::NOOP).src(UPat(Ops::NOOP), UPat(Ops::NOOP)).any_len(), []() { return true; })});
  UOp n(Ops::NOOP);
  EXPECT_TRUE(matcher.rewrite(UOp(Ops::NOOP, DType(), {n, n, n})).value_or(false));
  EXPECT_TRUE(matcher.rewrite(UOp(Ops::NOOP, DType(), {n, n})).value_or(false));
  EXPECT_FALSE(matcher.rewrite(UOp(Ops::NOOP, DType(), {n})).has_value());
}

TEST(TestPatternMatcher, test_match_sz_0_ctx) {
  PatternMatcher matcher("t", {TG_RULE(UPat(Ops::NOOP).src_tuple({}).named("x"), [](std::vector<bool>& ctx, UOp x) {
    ctx.push_back(true);
    EXPECT_EQ(x.nsrc(), 0u);
    return x.with_src({UOp(Ops::NOOP)});
  })});
  UOp c1(Ops::NOOP);
  std::vector<bool> ctx;
  // second rewrite shouldn't match anything
  c1 = matcher.rewrite(c1, &ctx);
  UOp c2 = matcher.rewrite(c1, &ctx);
  EXPECT_FALSE(c2);
  EXPECT_EQ(ctx.size(), 1u);
}

TEST(TestPatternMatcher, test_uop) {
  PatternMatcher matcher("t", {TG_RULE(UPat(Ops::CONST).named("x"), [](UOp x) { return x.rtag(); })});
  UOp c1 = cf(1.0);
  UOp c2(Ops::ADD, DType(), {c1, c1});
  EXPECT_EQ(matcher.rewrite(c1), c1.rtag());
  EXPECT_FALSE(matcher.rewrite(c2));
}

TEST(TestPatternMatcher, test_uop_set) {
  PatternMatcher matcher("t", {TG_RULE(UPat(ops(Ops::CONST, Ops::CAST)).named("x"), [](UOp x) { return x.rtag(); })});
  UOp c1 = UOp::const_(PyConst(false));
  UOp c2(Ops::CAST, DType(), {c1}, Arg(dtypes::int32));
  UOp c3 = cf(1.0);
  UOp c4(Ops::ADD, DType(), {c3, c3});
  EXPECT_EQ(matcher.rewrite(c1), c1.rtag());
  EXPECT_EQ(matcher.rewrite(c2), c2.rtag());
  EXPECT_FALSE(matcher.rewrite(c4));
}

TEST(TestPatternMatcher, test_arg) {
  PatternMatcher matcher("t", {
    TG_RULE(UPat(Ops::CONST).arg(Arg(0)).named("x"), [](UOp x) { return x.rtag(); }),
    TG_RULE(UPat(Ops::CONST).arg(Arg(false)).named("x"), [](UOp x) { return x.rtag(); }),
    TG_RULE(UPat(Ops::MAX).named("x"), [](UOp x) { return x.rtag(); }),
  });
  UOp c1 = cf(0.0), c2 = UOp::const_(PyConst(false));
  UOp c3(Ops::MAX, DType(), {c1, c1}), c4(Ops::MUL, DType(), {c1, c1});
  UOp c5 = ci(-1);
  EXPECT_EQ(matcher.rewrite(c1), c1.rtag());
  EXPECT_EQ(matcher.rewrite(c2), c2.rtag());
  EXPECT_EQ(matcher.rewrite(c3), c3.rtag());
  EXPECT_FALSE(matcher.rewrite(c4));
  EXPECT_FALSE(matcher.rewrite(c5));
}

TEST(TestPatternMatcher, test_filter_arg) {
  PatternMatcher matcher("t", {TG_RULE(UPat(Ops::MUL).perm(UPat(Ops::CONST).named("c"), UPat(Ops::CONST).arg(Arg(2))).named("x"),
                                       [](UOp x, UOp c) {
    return (c.val() == PyConst(1) || c.val() == PyConst(-1)) ? x.rtag() : UOp();
  })});
  UOp y1 = ci(1), y2 = ci(2), y3 = ci(-1);
  UOp c1(Ops::MUL, DType(), {y1, y2}), c2(Ops::MUL, DType(), {y2, y2}), c3(Ops::MUL, DType(), {y3, y2});
  UOp c4(Ops::MUL, DType(), {y2, y1}), c5(Ops::MUL, DType(), {y2, y3});
  EXPECT_EQ(matcher.rewrite(c1), c1.rtag());
  EXPECT_FALSE(matcher.rewrite(c2));
  EXPECT_EQ(matcher.rewrite(c3), c3.rtag());
  EXPECT_EQ(matcher.rewrite(c4), c4.rtag());
  EXPECT_EQ(matcher.rewrite(c5), c5.rtag());
}

TEST(TestPatternMatcher, test_dup_name) {
  PatternMatcher matcher("t", {TG_RULE(UPat(GroupOp::ALU).named("x").src(UPat(Ops::CONST).named("y"), UPat(Ops::CONST).named("y")),
                                       [](UOp x, UOp y) { return x.rtag(); })});
  UOp y1 = cf(1.0), y2 = cf(1.0);  // hash-consed: the same node
  UOp c1(Ops::ADD, DType(), {y1, y1}), c2(Ops::ADD, DType(), {y1, y2});
  EXPECT_EQ(matcher.rewrite(c1), c1.rtag());
  EXPECT_EQ(matcher.rewrite(c2), c1.rtag());
  // a different node under the same name does not match
  UOp c3(Ops::ADD, DType(), {y1, cf(2.0)});
  EXPECT_FALSE(matcher.rewrite(c3));
}

TEST(TestPatternMatcher, test_dtype) {
  PatternMatcher matcher("t", {TG_RULE(UPat(Ops::CAST).named("x").dtype(dtypes::float32), [](UOp x) { return x.rtag(); })});
  UOp c1 = cf(1.0).cast(dtypes::float32), c2 = cf(1.0).cast(dtypes::float64);
  EXPECT_EQ(matcher.rewrite(c1), c1.rtag());
  EXPECT_FALSE(matcher.rewrite(c2));
}

TEST(TestPatternMatcher, test_dtype_set) {
  PatternMatcher matcher("t", {TG_RULE(UPat(Ops::CAST).named("x").dtype(DTypes{dtypes::float32, dtypes::float64}),
                                       [](UOp x) { return x.rtag(); })});
  UOp c1 = cf(1.0).cast(dtypes::float32), c2 = cf(1.0).cast(dtypes::float64), c3 = cf(1.0).cast(dtypes::float16);
  UOp c4 = ci(1).cast(dtypes::int32);
  EXPECT_EQ(matcher.rewrite(c1), c1.rtag());
  EXPECT_EQ(matcher.rewrite(c2), c2.rtag());
  EXPECT_FALSE(matcher.rewrite(c3));
  EXPECT_FALSE(matcher.rewrite(c4));
}

TEST(TestPatternMatcher, test_src_one) {
  PatternMatcher matcher("t", {TG_RULE(UPat(GroupOp::ALU).named("x").src(UPat(Ops::CONST), UPat(Ops::CONST)), [](UOp x) { return x.rtag(); })});
  UOp c1 = cf(1.0), c2 = cf(2.0);
  UOp c3(Ops::ADD, DType(), {c1, c2});
  EXPECT_EQ(matcher.rewrite(c3), c3.rtag());
  EXPECT_FALSE(matcher.rewrite(c2));
}

TEST(TestPatternMatcher, test_src_permutations) {
  PatternMatcher matcher("t", {TG_RULE(UPat(GroupOp::ALU).named("x").perm(UPat(Ops::CONST), UPat(GroupOp::ALU)), [](UOp x) { return x.rtag(); })});
  UOp c1 = cf(1.0), c2 = cf(2.0);
  UOp c3(Ops::ADD, DType(), {c1, c2}), c4(Ops::ADD, DType(), {c3, c2}), c5(Ops::ADD, DType(), {c2, c3}), c6(Ops::ADD, DType(), {c3, c4});
  EXPECT_FALSE(matcher.rewrite(c3));
  EXPECT_EQ(matcher.rewrite(c4), c4.rtag());
  EXPECT_EQ(matcher.rewrite(c5), c5.rtag());
  EXPECT_FALSE(matcher.rewrite(c6));
}

TEST(TestPatternMatcher, test_src_repeat) {
  PatternMatcher matcher("t", {TG_RULE(UPat(GroupOp::ALU).named("x").src_all(UPat(Ops::CONST)), [](UOp x) { return x.rtag(); })});
  UOp c1 = cf(1.0), c2 = cf(2.0);
  UOp c3(Ops::ADD, DType(), {c1, c2}), c4(Ops::ADD, DType(), {c2, c3});
  EXPECT_EQ(matcher.rewrite(c3), c3.rtag());
  EXPECT_FALSE(matcher.rewrite(c4));
}

TEST(TestPatternMatcher, test_allow_len) {
  PatternMatcher matcher("t", {TG_RULE(UPat(Ops::MULACC).named("x").src(UPat(Ops::CONST)).any_len(), [](UOp x) { return x.rtag(); })});
  UOp c1 = cf(1.0), c2 = cf(2.0), c3 = cf(3.0);
  UOp c4(Ops::EXP2, DType(), {c1}), c5(Ops::ADD, DType(), {c1, c2}), c6(Ops::MULACC, DType(), {c1, c2, c3});
  EXPECT_FALSE(matcher.rewrite(c4));
  EXPECT_FALSE(matcher.rewrite(c5));
  EXPECT_EQ(matcher.rewrite(c6), c6.rtag());
}

TEST(TestPatternMatcher, test_deep_src_permutations) {
  UOp c1 = cf(1.0), c2 = cf(2.0);
  UOp u1 = (c1 + c2) + c1, u2 = (c2 + c1) + c1;
  PatternMatcher matcher("t", {TG_RULE(UPat(GroupOp::ALU).perm(UPat(GroupOp::ALU).perm(UPat().named("a"), UPat().named("b")), UPat().named("b")),
                                       [](UOp a, UOp b) { return b; })});
  EXPECT_TRUE(matcher.rewrite(u1));
  EXPECT_TRUE(matcher.rewrite(u2));
}

// ***** behaviour the reference pins elsewhere (ops.py semantics) *****

TEST(TestPatternMatcherSemantics, returning_the_same_node_is_no_match_and_next_rule_runs) {
  int calls = 0;
  static int* pcalls;
  pcalls = &calls;
  PatternMatcher matcher("t", {
    TG_RULE(UPat(Ops::CONST).named("x"), [](UOp x) { (*pcalls)++; return x; }),
    TG_RULE(UPat(Ops::CONST).named("x"), [](UOp x) { return x.rtag(); }),
  });
  UOp c = ci(3);
  EXPECT_EQ(matcher.rewrite(c), c.rtag());
  EXPECT_EQ(calls, 1);
}

TEST(TestPatternMatcherSemantics, rule_called_per_binding_until_not_none) {
  // a permutation pattern yields two bindings for ADD(c1, c2); the rule sees both in itertools order
  static std::vector<std::string>* seen;
  std::vector<std::string> s;
  seen = &s;
  PatternMatcher matcher("t", {TG_RULE(UPat(Ops::ADD).perm(UPat(Ops::CONST).named("a"), UPat(Ops::CONST).named("b")), [](UOp a, UOp b) {
    seen->push_back(a.val().str() + "," + b.val().str());
    return UOp();
  })});
  EXPECT_FALSE(matcher.rewrite(ci(1) + ci(2)));
  EXPECT_EQ(s, (std::vector<std::string>{"1,2", "2,1"}));
}

TEST(TestPatternMatcherSemantics, arg_matches_python_equality) {
  // UPat(CONST, arg=1) matches 1, 1.0 and True
  BoolMatcher m("t", {TG_RULE(UPat(Ops::CONST).arg(Arg(1)), []() { return true; })});
  EXPECT_TRUE(m.rewrite(ci(1)).has_value());
  EXPECT_TRUE(m.rewrite(cf(1.0)).has_value());
  EXPECT_TRUE(m.rewrite(UOp::const_(PyConst(true))).has_value());
  EXPECT_FALSE(m.rewrite(ci(2)).has_value());
}

TEST(TestPatternMatcherSemantics, early_reject_skips_rules_whose_src_ops_are_absent) {
  PatternMatcher m("t", {TG_RULE(UPat(Ops::ADD).src(UPat(Ops::MUL), UPat(Ops::CONST)).named("x"), [](UOp x) { return x.rtag(); })});
  const RuleData& r = *m.rules()[0];
  EXPECT_TRUE(r.early_reject.has(Ops::MUL));
  EXPECT_TRUE(r.early_reject.has(Ops::CONST));
  EXPECT_EQ(r.early_reject.size(), 2);
}

TEST(TestPatternMatcherSemantics, rule_knows_where_it_was_written) {
  PatternMatcher m("my_matcher", {TG_RULE(UPat(Ops::CONST).named("x"), [](UOp x) { return x.rtag(); })});
  const RuleData& r = *m.rules()[0];
  EXPECT_EQ(r.file, "tests/unit/test_pattern_matcher.cpp");
  EXPECT_GT(r.src.line, 0);
  EXPECT_NE(r.text.find("x.rtag()"), std::string::npos);
  EXPECT_EQ(r.matcher, "my_matcher");
  EXPECT_EQ(rule_by_id(r.id), &r);
}

TEST(TestPatternMatcherSemantics, ctx_type_mismatch_is_a_clear_error) {
  PatternMatcher m("t", {TG_RULE(UPat(Ops::CONST).named("x"), [](std::vector<int>& ctx, UOp x) { return x.rtag(); })});
  std::string wrong;
  try {
    m.rewrite(ci(1), &wrong);
    FAIL() << "expected tg::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("takes a ctx of type"), std::string::npos);
  }
}

TEST(TestPatternMatcherSemantics, concatenation_keeps_priority_order) {
  PatternMatcher a("a", {TG_RULE(UPat(Ops::CONST).named("x"), [](UOp x) { return x.rtag(Arg(1)); })});
  PatternMatcher b("b", {TG_RULE(UPat(Ops::CONST).named("x"), [](UOp x) { return x.rtag(Arg(2)); })});
  EXPECT_EQ((a + b).rewrite(ci(5)), ci(5).rtag(Arg(1)));
  EXPECT_EQ((b + a).rewrite(ci(5)), ci(5).rtag(Arg(2)));
}

// rewrite_into lists, per (rule set, node kind), the rules of a big bucket that admit the kind (upat.cpp): the rule
// that answers must be the first in order whose pattern matches, whatever kinds and rule sets came before. The oracle:
// each rule alone in its own matcher (a bucket of one is not listed), tried in order
TEST(TestPatternMatcherSemantics, kind_lists_answer_as_the_whole_bucket) {
  using IntMatcher = BasicPatternMatcher<std::optional<int>>;
  // 8 ADD rules (a listed bucket), told apart by srcs' ops in order, dtype, src count, an Invalid in the slice, a
  // CONST's value, a repeated node, the function's own test
  auto rules = [](int base) {
    return std::vector<IntMatcher::Entry>{
        TG_RULE(UPat(Ops::ADD).src(UPat(Ops::CONST).arg(Arg((long long)7)), UPat()), [=]() { return base + 1; }),
        TG_RULE(UPat(Ops::ADD).dtype(dtypes::float32).src(UPat(Ops::MUL), UPat(Ops::CONST)),
                [=]() { return base + 2; }),
        TG_RULE(UPat(Ops::ADD).perm(UPat(Ops::MUL), UPat(Ops::CONST)), [=]() { return base + 3; }),
        TG_RULE(UPat(Ops::ADD).src(UPat::var("x"), UPat::var("x")), [=]() { return base + 4; }),
        TG_RULE(UPat(Ops::ADD).src(UPat(), UPat(Ops::CONST).arg(Arg::invalid())), [=]() { return base + 5; }),
        TG_RULE(
            UPat(Ops::ADD).dtype(dtypes::int32).named("a"),
            [=](const UOp& a) { return a.src(0).op() == Ops::RANGE ? std::optional<int>(base + 6) : std::nullopt; }),
        TG_RULE(UPat(Ops::ADD).src(UPat(), UPat(), UPat()), [=]() { return base + 7; }),
        TG_RULE(UPat(Ops::ADD).dtype(dtypes::float32), [=]() { return base + 8; }),
    };
  };
  // the rules in order (reversed: the same rules, other positions in the bucket)
  auto ordered = [&](int base, bool reversed) {
    std::vector<IntMatcher::Entry> r = rules(base);
    if (reversed) std::reverse(r.begin(), r.end());
    return r;
  };
  auto oracle = [&](int base, bool reversed, const UOp& u) -> std::optional<int> {
    for (IntMatcher::Entry& e : ordered(base, reversed))
      if (std::optional<int> v = IntMatcher("one", {e}).rewrite(u)) return v;
    return std::nullopt;
  };
  UOp f = UOp::const_(PyConst(1.5), dtypes::float32), fm = f * f, i7 = UOp::const_(PyConst(7), dtypes::int32);
  UOp i3 = UOp::const_(PyConst(3), dtypes::int32), r = UOp::range(sint(4), 0, AxisType::LOOP, dtypes::int32);
  UOp iv = UOp::const_(PyConst::invalid(), dtypes::int32);
  // the nodes, and the answers of the rules in order
  const std::vector<std::pair<UOp, std::optional<int>>> cases{
      {UOp(Ops::ADD, dtypes::float32, {f, f}), 4},   // the same node twice (then a kind with a MUL src)
      {UOp(Ops::ADD, dtypes::float32, {fm, f}), 2},  // the first rule that matches, not the later ones
      {UOp(Ops::ADD, dtypes::float32, {f, fm}), 3},  // the other order: only the permutation rule
      {UOp(Ops::ADD, dtypes::int32, {i3, i7}), std::nullopt},
      {UOp(Ops::ADD, dtypes::int32, {i7, i3}), 1},   // the same kind, the CONST's value decides
      {UOp(Ops::ADD, dtypes::int32, {r, i3}), 6},    // the rule's function decides
      {UOp(Ops::ADD, dtypes::int32, {r, iv}), 5},    // an Invalid in the slice
      {UOp(Ops::ADD, dtypes::int32, {r, r, r}), 6},  // three srcs: not (x, x), a tuple of two
      {UOp(Ops::ADD, dtypes::int32, {i3, r, r}), 7},
      {UOp(Ops::ADD, dtypes::int32, {i3, r, r, r}), std::nullopt},  // more than 3 srcs: the loop over the bucket
      {UOp(Ops::ADD, dtypes::float32, {f, f, f, f}), 8},
  };
  IntMatcher fwd("kinds", ordered(0, false));
  for (size_t k = 0; k < cases.size(); k++) {
    EXPECT_EQ(oracle(0, false, cases[k].first), cases[k].second) << "case " << k;
    EXPECT_EQ(fwd.rewrite(cases[k].first), cases[k].second) << "case " << k;
  }
  // fresh rule sets (their lists made anew), both orders of the rules, the nodes in every rotation: a list made for
  // one kind and used for another, or one rule set's list used for another's, answers differently somewhere here
  for (int round = 0; round < 200; round++) {
    const bool reversed = round % 2;
    const int base = 1000 * (round + 1);
    IntMatcher m("kinds", ordered(base, reversed));
    for (size_t k = 0; k < cases.size(); k++) {
      const UOp& u = cases[(k + (size_t)round / 2) % cases.size()].first;
      EXPECT_EQ(m.rewrite(u), oracle(base, reversed, u)) << "round " << round << " case " << k;
    }
  }
  // and the first rule set's answers have not moved
  for (size_t k = 0; k < cases.size(); k++) EXPECT_EQ(fwd.rewrite(cases[k].first), cases[k].second) << "case " << k;
}
