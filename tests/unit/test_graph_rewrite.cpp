// Transcribed from the reference's test/null/test_graph_rewrite.py (the classes that do not need codegen's
// full_rewrite: TestBottomUpRewrite, TestSubstitute, TestRecurse, TestBidirectional, TestStopEarly, TestWalkRewrite).
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <thread>
#include <variant>

#include "lib/uop/rewrite.h"
#include "lib/uop/symbolic.h"
#include "lib/uop/track.h"

using namespace tg;

static UOp ci(int v) { return UOp::const_(PyConst(v)); }
static UOp var(const char* n, DType d = DType()) { return UOp::variable(n, 0, 10, d); }
using Subst = std::vector<std::pair<UOp, UOp>>;
static UOpMap<UOp> dmap(const Subst& s) {
  UOpMap<UOp> m;
  for (auto& [k, v] : s) m[k] = v;
  return m;
}

TEST(TestBottomUpRewrite, test_const_folding) {
  UOp a = ci(5);
  UOp ret = (a * 3) + (a * 7);
  UOp gt = graph_rewrite(ret, symbolic_simple());
  UOp bu = graph_rewrite(ret, symbolic_simple(), {.bottom_up = true});
  EXPECT_EQ(gt, bu);
  EXPECT_EQ(gt, ci(50));
}

// the reference tracks this through a rewrite_group; here a named Group around a bottom-up _substitute
static UOp substitute(const UOp& uop, const Subst& rel) {
  track::Group g("named_substitute");
  auto m = dmap(rel);
  return graph_rewrite(uop, pm_substitute(), {.ctx = &m, .bottom_up = true});
}

TEST(TestSubstitute, test_simple) {
  UOp a = var("a"), b = var("b");
  EXPECT_EQ(substitute(a + 4, {{a, b}}), b + 4);
}
TEST(TestSubstitute, test_double) {
  UOp a = var("a"), b = var("b"), c = var("c");
  EXPECT_EQ(substitute((a + 4) + b, {{a, c}, {b, c}}), (c + 4) + c);
}
TEST(TestSubstitute, test_diamond) {
  UOp a = var("a"), b = var("b");
  EXPECT_EQ(substitute((a + 4) + (a + 5), {{a, b}}), (b + 4) + (b + 5));
}
TEST(TestSubstitute, test_sin) {
  UOp a = var("a", dtypes::float32), b = var("b", dtypes::float32);
  EXPECT_EQ(substitute(a.sin().sin(), {{a.sin(), b}}), b.sin());
}
TEST(TestSubstitute, test_sin_to_sqrt) {
  UOp a = var("a", dtypes::float32);
  UOp n1 = a.sin();
  EXPECT_EQ(substitute(n1.sin(), {{a.sin(), a.sqrt()}}), a.sqrt().sin());
}
TEST(TestSubstitute, test_double_sin_to_sqrt) {
  UOp a = var("a", dtypes::float32);
  UOp n1 = a.sin();
  // NOTE: this would work if it had gone in the opposite order
  EXPECT_EQ(substitute(n1.sin(), {{a.sin(), a.sqrt()}, {n1.sin(), n1.sqrt()}}), a.sqrt().sqrt());
}
TEST(TestSubstitute, test_tagged_replace) {
  UOp a = var("a"), b = var("b");
  UOp ret = (a + 4).rtag(Arg(1));
  // the srcs are rewritten but we keep tag
  EXPECT_EQ(substitute(ret, {{a, b}}), (b + 4).rtag(Arg(1)));
}
TEST(TestSubstitute, test_method_drops_identity_entries) {
  UOp a = var("a"), b = var("b");
  UOp x = a + b;
  EXPECT_EQ(x.substitute({{a, a}}), x);
  EXPECT_EQ(x.substitute({{a, b}}), b + b);
}
TEST(TestSubstitute, test_self_containing_replacement_needs_walk) {
  // (a*2).substitute({a: a+1}): unified mode waits on itself; walk mode gives ((a+1)*2)
  UOp a = var("a");
  EXPECT_THROW((a * 2).substitute({{a, a + 1}}), RewriteError);
  EXPECT_EQ((a * 2).substitute({{a, a + 1}}, nullptr, true), (a + 1) * 2);
}

// appends n random nodes over `nodes`: sums, products, maxes and wheres, with fold_zero also x+0 (symbolic folds it)
static void grow_random_graph(std::mt19937& rng, std::vector<UOp>& nodes, int n, bool fold_zero = false) {
  for (int i = 0; i < n; i++) {
    const UOp &x = nodes[rng() % nodes.size()], &y = nodes[rng() % nodes.size()];
    switch (rng() % (fold_zero ? 5 : 4)) {
      case 0:
        nodes.push_back(x + y);
        break;
      case 1:
        nodes.push_back(x * y);
        break;
      case 2:
        nodes.push_back(x.alu(Ops::MAX, y));
        break;
      case 3:
        if (fold_zero) {
          nodes.push_back(x + ci(0));
          break;
        }
        [[fallthrough]];
      default:
        nodes.push_back((x < y).where(x, y));
        break;
    }
  }
}

// UOp::substitute takes a direct walk without the pattern machinery when nothing observes its matches (no extra
// matcher, no match stats); it must give what the bottom-up graph_rewrite with _substitute gives (taken here with an
// empty extra matcher), in walk mode too, errors included: random
// graphs and maps whose values may contain their keys, form cycles or lie inside CALL bodies
TEST(TestSubstitute, test_direct_walk_equals_the_rewrite) {
  std::mt19937 rng(1234);
  int errors = 0, changed = 0;
  for (int trial = 0; trial < 600; trial++) {
    std::vector<UOp> nodes = {var("a"), var("b"), var("c"), ci(1), ci(2)};
    grow_random_graph(rng, nodes, 3 + (int)(rng() % 12));
    UOp root = UOp::sink(std::vector<UOp>{nodes.back(), nodes[nodes.size() - 2]});
    if (trial % 3 == 0)  // a CALL whose body holds part of the graph
      root = UOp(Ops::CALL, dtypes::void_, std::vector<UOp>{UOp::sink(std::vector<UOp>{nodes[5]}), root});
    Subst s;
    for (int k = 0, nk = 1 + (int)(rng() % 3); k < nk; k++)
      s.push_back({nodes[rng() % nodes.size()], nodes[rng() % nodes.size()]});
    for (bool walk : {false, true})
      for (bool enter_calls : {false, true}) {
        static const PatternMatcher no_rules("no_rules", {});
        auto run = [&](const PatternMatcher* extra) -> std::variant<UOp, std::string> {
          try {
            return root.substitute(s, "substitute", walk, enter_calls, extra);
          } catch (const RewriteError& e) {
            return std::string(e.what());
          }
        };
        auto direct = run(nullptr), rewrite = run(&no_rules);
        ASSERT_EQ(direct.index(), rewrite.index()) << "trial " << trial << " walk " << walk;
        if (direct.index() == 1) {
          errors++;
          EXPECT_EQ(std::get<1>(direct), std::get<1>(rewrite));
        } else {
          changed += !(std::get<0>(direct) == root);
          EXPECT_EQ(std::get<0>(direct), std::get<0>(rewrite)) << "trial " << trial << " walk " << walk;
        }
      }
  }
  // the cases are not all trivial
  EXPECT_GT(errors, 50);
  EXPECT_GT(changed, 1000);
}

// RewriteOpts::memo: rewrites of overlapping roots with one pure matcher share their results. Each root must give what
// a rewrite of its own gives, and the shared nodes are not visited again
TEST(TestRewriteMemo, test_memo_equals_separate_rewrites) {
  std::mt19937 rng(4321);
  int changed = 0;
  for (int trial = 0; trial < 200; trial++) {
    std::vector<UOp> nodes = {var("a"), var("b"), ci(0), ci(1), ci(2), ci(3)};
    grow_random_graph(rng, nodes, 4 + (int)(rng() % 16), true);
    NodeMap<UOp> memo;
    for (size_t i = nodes.size() / 2; i < nodes.size(); i++) {
      UOp alone = graph_rewrite(nodes[i], symbolic());
      EXPECT_EQ(graph_rewrite(nodes[i], symbolic(), {.memo = &memo}), alone) << "trial " << trial << " node " << i;
      changed += !(alone == nodes[i]);
    }
  }
  EXPECT_GT(changed, 300);
}
static int memo_visits = 0;
static const PatternMatcher& counting_fold() {
  static const PatternMatcher pm("counting_fold",
                                 {
                                     TG_RULE(UPat(Ops::ADD).src(UPat::var("x"), UPat(Ops::CONST).arg(Arg(0))),
                                             [](UOp x) {
                                               memo_visits++;
                                               return x;
                                             }),
                                 });
  return pm;
}
TEST(TestRewriteMemo, test_shared_nodes_are_not_visited_again) {
  UOp a = var("a"), b = var("b");
  UOp shared = (a + ci(0)) * (b + ci(0));
  NodeMap<UOp> memo;
  memo_visits = 0;
  EXPECT_EQ(graph_rewrite(shared + ci(1), counting_fold(), {.memo = &memo}), (a * b) + ci(1));
  EXPECT_EQ(memo_visits, 2);
  EXPECT_EQ(graph_rewrite(shared.alu(Ops::MAX, a + ci(0)), counting_fold(), {.memo = &memo}), (a * b).alu(Ops::MAX, a));
  EXPECT_EQ(memo_visits, 2);  // a+0 and the product come from the memo
  EXPECT_EQ(graph_rewrite(shared, counting_fold()), a * b);
  EXPECT_EQ(memo_visits, 4);  // without it they are rewritten again
}
TEST(TestRewriteMemo, test_memo_needs_an_untracked_pure_rewrite) {
  NodeMap<UOp> memo;
  UOpMap<UOp> m;
  UOp a = var("a");
  EXPECT_THROW(graph_rewrite(a + ci(0), symbolic(), {.ctx = &m, .memo = &memo}), Error);
  EXPECT_THROW(graph_rewrite(a + ci(0), symbolic(), {.walk = true, .memo = &memo}), Error);
  EXPECT_THROW(graph_rewrite_bpm(a + ci(0), nullptr, symbolic(), {.memo = &memo}), Error);
  Context c({{"TRACK_MATCH_STATS", 1}});
  EXPECT_THROW(graph_rewrite(a + ci(0), symbolic(), {.memo = &memo}), Error);
}

// The driver keeps its state for a node in a slot the node points to (its claim). A rewrite run by a rule of an outer
// rewrite, on the outer's nodes, takes the outer's claims and gives them back when it ends; a rewrite on another
// thread leaves them and keeps its state in a hash map. Every way must give the same results.
struct NestCtx {
  std::function<UOp(const UOp&)> nested;  // what the rule on a MAX node returns (the node itself: no match)
};
static const PatternMatcher& nesting_pm() {
  static const PatternMatcher pm("nesting", {
                                                TG_RULE(UPat(Ops::MAX).named("x"),
                                                        [](NestCtx& ctx, UOp x) {
                                                          UOp r = ctx.nested(x);
                                                          return r == x ? UOp() : r;
                                                        }),
                                            });
  return pm;
}
static UOp on_other_thread(const std::function<UOp()>& f, size_t* unclaimed = nullptr) {
  UOp r;
  std::thread t([&] {
    size_t before = detail::rewrite_unclaimed_nodes();
    r = f();
    if (unclaimed) *unclaimed += detail::rewrite_unclaimed_nodes() - before;
  });
  t.join();
  return r;
}
// rewrites nested deeper than the levels a thread tracks: the deeper ones keep their state for the outer's nodes in
// their maps, and every level still gives its result. Each untagged MAX rewrites its first src in a nested bottom-up
// rewrite (one level deeper per MAX) and tags itself, so the rule does not run again on its result
static const PatternMatcher& deep_pm() {
  static const PatternMatcher pm("deep", {
                                             TG_RULE(UPat::var("x") + 0, [](UOp x) { return x; }),
                                             TG_RULE(UPat(Ops::MAX).named("m"),
                                                     [](UOp m) {
                                                       if (!m.tag().is_none()) return UOp();
                                                       UOp r = graph_rewrite(m.src(0), deep_pm(), {.bottom_up = true});
                                                       return m.with_src({r, m.src(1)}).rtag(Arg(1));
                                                     }),
                                         });
  return pm;
}
TEST(TestRewriteClaims, test_nesting_deeper_than_tracked) {
  UOp a = var("a"), b = var("b");
  UOp in = a + ci(0), want = a;
  for (int i = 0; i < 150; i++) in = in.alu(Ops::MAX, b), want = want.alu(Ops::MAX, b).rtag(Arg(1));
  EXPECT_EQ(graph_rewrite(in, deep_pm(), {.bottom_up = true}), want);
  UOp r;
  std::thread t([&] { r = graph_rewrite(in, deep_pm(), {.bottom_up = true}); });
  t.join();
  EXPECT_EQ(r, want);
}
TEST(TestRewriteClaims, test_nested_rewrites_on_the_outer_nodes) {
  std::mt19937 rng(777);
  int changed = 0;
  size_t other_unclaimed = 0;
  const size_t unclaimed_before = detail::rewrite_unclaimed_nodes();
  for (int trial = 0; trial < 150; trial++) {
    std::vector<UOp> nodes = {var("a"), var("b"), ci(0), ci(1), ci(2)};
    grow_random_graph(rng, nodes, 6 + (int)(rng() % 20), true);
    UOp root = UOp::sink(std::vector<UOp>{nodes.back(), nodes[nodes.size() / 2]});
    // one level: the MAX's subgraph simplified by a rewrite nested on this thread or run on another one
    NestCtx here{[](const UOp& x) { return graph_rewrite(x, symbolic()); }};
    NestCtx there{
        [&](const UOp& x) { return on_other_thread([&] { return graph_rewrite(x, symbolic()); }, &other_unclaimed); }};
    UOp r1 = graph_rewrite(root, nesting_pm(), {.ctx = &here});
    EXPECT_EQ(r1, graph_rewrite(root, nesting_pm(), {.ctx = &there})) << "trial " << trial;
    // two levels: the nested rewrite runs the nesting matcher itself, whose rule nests once more
    NestCtx inner_here{[&](const UOp& x) { return graph_rewrite(x, nesting_pm(), {.ctx = &here}); }};
    NestCtx inner_there{[&](const UOp& x) { return graph_rewrite(x, nesting_pm(), {.ctx = &there}); }};
    UOp r2 = graph_rewrite(root, nesting_pm(), {.ctx = &inner_here});
    EXPECT_EQ(r2, graph_rewrite(root, nesting_pm(), {.ctx = &inner_there})) << "trial " << trial;
    // the same rewrite on two threads at once, on one graph: their claims meet
    UOp a, b;
    std::thread ta([&] { a = graph_rewrite(root, nesting_pm(), {.ctx = &inner_here}); });
    std::thread tb([&] { b = graph_rewrite(root, nesting_pm(), {.ctx = &inner_here}); });
    ta.join(), tb.join();
    EXPECT_EQ(a, r2) << "trial " << trial;
    EXPECT_EQ(b, r2) << "trial " << trial;
    changed += !(r1 == root);
  }
  EXPECT_GT(changed, 60);
  // on this thread every nested rewrite took the outer's claims; the other thread's found the outer's nodes claimed
  EXPECT_EQ(detail::rewrite_unclaimed_nodes(), unclaimed_before);
  EXPECT_GT(other_unclaimed, 1000u);
}
// simplify() keeps the result of every node its rewrite visits in that node's cache and takes the cached results of
// nodes simplified before: on random index expressions (sums, products, floordiv and mod by constants), simplifying
// parts first, then the whole, then the whole with a variable substituted must give what a plain rewrite gives
TEST(TestRewriteMemo, test_simplify_memo_equals_the_rewrite) {
  std::mt19937 rng(777);
  UOp vars[3] = {UOp::variable("i", 0, 15), UOp::variable("j", 0, 7), UOp::variable("k", 1, 31)};
  int changed = 0;
  for (int trial = 0; trial < 300; trial++) {
    std::vector<UOp> nodes = {vars[0], vars[1], vars[2]};
    for (int i = 0, n = 3 + (int)(rng() % 10); i < n; i++) {
      const UOp& x = nodes[rng() % nodes.size()];
      const UOp& y = nodes[rng() % nodes.size()];
      int c = 1 + (int)(rng() % 6);
      switch (rng() % 5) {
        case 0:
          nodes.push_back(x + y);
          break;
        case 1:
          nodes.push_back(x * c + y);
          break;
        case 2:
          nodes.push_back(x.floordiv(c));
          break;
        case 3:
          nodes.push_back(x % ci(c));
          break;
        default:
          nodes.push_back((x + c) * 2);
          break;
      }
    }
    UOp plain[2];
    {
      Context counted({{"TRACK_MATCH_STATS", 1}});  // no memo, nothing cached
      plain[0] = graph_rewrite(nodes.back(), symbolic());
    }
    for (size_t i = 3 + rng() % 3; i < nodes.size(); i += 2) nodes[i].simplify();  // some parts first
    EXPECT_EQ(nodes.back().simplify(), plain[0]) << "trial " << trial;
    changed += !(plain[0] == nodes.back());
    UOp sub = nodes.back().substitute({{vars[0], UOp::variable("fake", 2, 9)}});
    {
      Context counted({{"TRACK_MATCH_STATS", 1}});
      plain[1] = graph_rewrite(sub, symbolic());
    }
    EXPECT_EQ(sub.simplify(), plain[1]) << "trial " << trial << " substituted";
  }
  EXPECT_GT(changed, 60);
}

// A node keeps the ops of its backward slice. A rewrite skips the subgraphs none of whose ops its rules' roots can
// have, when the order its rules run in cannot be seen (no match stats, no trace, no writable context): every node a
// rule can match is still tried once, results are unchanged, and a writable context sees the reference's order
TEST(TestSkipUntouched, slice_ops_hold_the_backward_slice) {
  UOp a = var("a"), b = var("b");
  UOp m = a.alu(Ops::MAX, b), s = (m + a) * ci(3);
  for (const UOp& u : s.toposort()) {
    OpSet expect(u.op());
    for (const UOp& x : u.backward_slice()) expect.add(x.op());
    EXPECT_TRUE(u.slice_ops() == expect) << op_repr(u.op());
  }
  EXPECT_TRUE(s.slice_ops().has(Ops::MAX));
  EXPECT_FALSE((a + b).slice_ops().has(Ops::MAX));
}
struct MaxSeen {
  mutable std::vector<UOp> seen;  // written through a const context: the driver may skip subgraphs
};
static const PatternMatcher& max_seen_pm() {
  static const PatternMatcher pm("max_seen", {
                                                 TG_RULE(UPat(Ops::MAX).named("x"),
                                                         [](const MaxSeen* ctx, const UOp& x) {
                                                           ctx->seen.push_back(x);
                                                           // MAX(y, y) -> y: a result the parents are rebuilt over
                                                           return x.src(0) == x.src(1) ? x.src(0) : UOp();
                                                         }),
                                             });
  return pm;
}
static const PatternMatcher& max_order_pm() {
  static const PatternMatcher pm("max_order", {
                                                  TG_RULE(UPat(Ops::MAX).named("x"),
                                                          [](std::vector<UOp>& order, const UOp& x) {
                                                            order.push_back(x);
                                                            return x.src(0) == x.src(1) ? x.src(0) : UOp();
                                                          }),
                                              });
  return pm;
}
TEST(TestSkipUntouched, every_matchable_node_is_tried_and_results_are_unchanged) {
  std::mt19937 rng(4242);
  int order_differs = 0;
  for (int trial = 0; trial < 200; trial++) {
    UOp a = var("a"), b = var("b");
    std::vector<UOp> nodes = {a, b, a.alu(Ops::MAX, a)};
    grow_random_graph(rng, nodes, 6 + (int)(rng() % 20));
    UOp root = UOp::sink(std::vector<UOp>(nodes.end() - 3, nodes.end()));
    for (bool bottom_up : {false, true}) {
      RewriteOpts o{.bottom_up = bottom_up};
      MaxSeen skipped, visited;
      std::vector<UOp> order_skipped, order_visited;
      UOp r_skipped, r_visited, w_skipped, w_visited;
      {
        Context c({{"TRACK_MATCH_STATS", 0}});
        o.ctx = const_cast<const MaxSeen*>(&skipped), r_skipped = graph_rewrite(root, max_seen_pm(), o);
        o.ctx = &order_skipped, w_skipped = graph_rewrite(root, max_order_pm(), o);
      }
      {
        Context c({{"TRACK_MATCH_STATS", 1}});  // counts every node tried: nothing is skipped
        o.ctx = const_cast<const MaxSeen*>(&visited), r_visited = graph_rewrite(root, max_seen_pm(), o);
        o.ctx = &order_visited, w_visited = graph_rewrite(root, max_order_pm(), o);
      }
      EXPECT_EQ(r_skipped, r_visited) << "trial " << trial;
      EXPECT_EQ(w_skipped, w_visited) << "trial " << trial;
      auto sorted = [](std::vector<UOp> v) {
        std::sort(v.begin(), v.end(), [](const UOp& x, const UOp& y) { return x.node() < y.node(); });
        return v;
      };
      EXPECT_TRUE(sorted(skipped.seen) == sorted(visited.seen)) << "trial " << trial;
      EXPECT_TRUE(order_skipped == order_visited) << "trial " << trial;  // a writable context: nothing skipped
      order_differs += skipped.seen != visited.seen;
    }
  }
  EXPECT_GT(order_differs, 0);  // skipping did happen, and it moved when the rule ran
}

TEST(TestRecurse, test_no_inf_loop) {
  for (int tracked : {0, 1}) {
    Context c({{"TRACK_MATCH_STATS", tracked}});
    UOp a = var("a");
    PatternMatcher pm("t", {TG_RULE(UPat(Ops::BUFFER).named("x"), [](UOp x) { return x; })});
    EXPECT_EQ(graph_rewrite(a, pm), a);
  }
}
TEST(TestRecurse, test_no_inf_loop_bottom_up) {
  for (int tracked : {0, 1}) {
    Context c({{"TRACK_MATCH_STATS", tracked}});
    UOp a = var("a");
    PatternMatcher pm("t", {TG_RULE(UPat(Ops::BUFFER).named("x"), [](UOp x) { return x; })});
    EXPECT_EQ(graph_rewrite(a, pm, {.bottom_up = true}), a);
  }
}
static const PatternMatcher& bounce() {
  static const PatternMatcher pm("bounce", {
    TG_RULE(UPat(Ops::CONST).arg(Arg(3)).named("x"), [](UOp x) { return UOp::const_(PyConst(4), x.dtype()); }),
    TG_RULE(UPat(Ops::CONST).arg(Arg(4)).named("x"), [](UOp x) { return UOp::const_(PyConst(3), x.dtype()); }),
  });
  return pm;
}
TEST(TestRecurse, test_inf_loop) {
  try {
    graph_rewrite(ci(3), bounce());
    FAIL() << "expected an infinite loop error";
  } catch (const RewriteError& e) {
    EXPECT_NE(std::string(e.what()).find("infinite loop in graph_rewrite"), std::string::npos);
  }
}
TEST(TestRecurse, test_inf_loop_bottom_up) {
  try {
    graph_rewrite(ci(3), bounce(), {.bottom_up = true});
    FAIL() << "expected an infinite loop error";
  } catch (const RewriteError& e) {
    EXPECT_NE(std::string(e.what()).find("infinite loop in fixed_point_rewrite"), std::string::npos);
  }
}

using Visit = std::vector<std::pair<std::string, std::string>>;
static std::string vname(const UOp& x) { return x.op() == Ops::CONST ? x.val().str() : std::string(op_name(x.op())); }

TEST(TestBidirectional, test_simple) {
  UOp c = ci(1) + ci(2);
  PatternMatcher pm("pm", {TG_RULE(UPat(GroupOp::all()).named("x"), [](Visit& ctx, UOp x) {
    ctx.push_back({x.op() == Ops::CONST ? x.val().str() : "+", "False"});
    return UOp();
  })});
  PatternMatcher bpm("bpm", {TG_RULE(UPat(GroupOp::all()).named("x"), [](Visit& ctx, UOp x) {
    ctx.push_back({x.op() == Ops::CONST ? x.val().str() : "+", "True"});
    return UOp();
  })});
  Visit v;
  graph_rewrite(c, pm, {.ctx = &v, .bpm = &bpm});
  EXPECT_EQ(v, (Visit{{"+", "True"}, {"1", "True"}, {"1", "False"}, {"2", "True"}, {"2", "False"}, {"+", "False"}}));
}

TEST(TestStopEarly, test_stop_early) {
  UOp a = ci(3), b = ci(4);
  UOp c = a + b, cn = ci(7), d = ci(2);
  PatternMatcher pm_cvisit("cvisit", {TG_RULE(UPat(Ops::CONST).named("c"), [](UOp c) {
    EXPECT_NE(c.val(), PyConst(3));
    EXPECT_NE(c.val(), PyConst(4));
    return UOp();
  })});
  UOp ret = (c + d).substitute({{c, cn}}, nullptr, false, false, &pm_cvisit);
  EXPECT_EQ(ret, cn + d);
}

// ***** walk=True *****

TEST(TestWalkRewrite, test_walk_topdown_simple_substitute) {
  UOp a = var("a"), b = var("b");
  auto m = dmap({{a, b}});
  EXPECT_EQ(graph_rewrite(a + 4, pm_substitute(), {.ctx = &m, .walk = true}), b + 4);
}
TEST(TestWalkRewrite, test_walk_topdown_does_not_traverse_into_replacement) {
  UOp a = var("a"), b = var("b"), c = var("c"), d = var("d");
  auto m = dmap({{a, b + c}, {b, d}});
  EXPECT_EQ(graph_rewrite(a + 4, pm_substitute(), {.ctx = &m, .walk = true}), (b + c) + 4);
  EXPECT_EQ(graph_rewrite(a + 4, pm_substitute(), {.ctx = &m, .bottom_up = true}), (d + c) + 4);
}
TEST(TestWalkRewrite, test_walk_topdown_no_fixed_point) {
  UOp a = ci(3);
  EXPECT_THROW(graph_rewrite(a, bounce(), {.bottom_up = true}), RewriteError);
  EXPECT_EQ(graph_rewrite(a, bounce(), {.walk = true}), ci(4));
}
TEST(TestWalkRewrite, test_walk_topdown_rewrites_children) {
  UOp a = var("a"), b = var("b"), c = var("c");
  auto m = dmap({{a, c}, {b, c}});
  EXPECT_EQ(graph_rewrite((a + 4) + (b + 5), pm_substitute(), {.ctx = &m, .walk = true}), (c + 4) + (c + 5));
}
TEST(TestWalkRewrite, test_walk_topdown_diamond) {
  UOp a = var("a"), b = var("b");
  auto m = dmap({{a, b}});
  EXPECT_EQ(graph_rewrite((a + 4) + (a + 5), pm_substitute(), {.ctx = &m, .walk = true}), (b + 4) + (b + 5));
}
TEST(TestWalkRewrite, test_walk_topdown_children_rewritten_before_parent) {
  UOp a = var("a", dtypes::float32);
  UOp n1 = a.sin(), ret = n1.sin();
  auto m = dmap({{a.sin(), a.sqrt()}, {n1.sin(), n1.sqrt()}});
  EXPECT_EQ(graph_rewrite(ret, pm_substitute(), {.ctx = &m, .walk = true}), a.sqrt().sin());
}
TEST(TestWalkRewrite, test_walk_topdown_self_referential_replacement) {
  UOp a = var("a", dtypes::float32);
  auto m = dmap({{a.sin(), a.sin().sqrt()}});
  EXPECT_EQ(graph_rewrite(a.sin() + 4, pm_substitute(), {.ctx = &m, .walk = true}), a.sin().sqrt() + 4);
}
static const PatternMatcher& track_visit() {
  static const PatternMatcher pm("track_visit", {TG_RULE(UPat(GroupOp::all()).named("x"), [](std::vector<std::string>& ctx, UOp x) {
    ctx.push_back(vname(x));
    return UOp();
  })});
  return pm;
}
TEST(TestWalkRewrite, test_walk_topdown_visit_order) {
  std::vector<std::string> visited;
  graph_rewrite(ci(1) + ci(2), track_visit(), {.ctx = &visited, .walk = true});
  EXPECT_EQ(visited, (std::vector<std::string>{"1", "2", "ADD"}));
}
TEST(TestWalkRewrite, test_walk_bottomup_simple_substitute) {
  UOp a = var("a"), b = var("b");
  auto m = dmap({{a, b}});
  EXPECT_EQ(graph_rewrite(a + 4, pm_substitute(), {.ctx = &m, .bottom_up = true, .walk = true}), b + 4);
}
TEST(TestWalkRewrite, test_walk_bottomup_does_not_traverse_into_replacement) {
  UOp a = var("a"), b = var("b"), c = var("c"), d = var("d");
  auto m = dmap({{a, b + c}, {b, d}});
  EXPECT_EQ(graph_rewrite(a + 4, pm_substitute(), {.ctx = &m, .bottom_up = true, .walk = true}), (b + c) + 4);
}
TEST(TestWalkRewrite, test_walk_bottomup_parent_match_skips_children) {
  UOp a = var("a", dtypes::float32);
  UOp n1 = a.sin(), ret = n1.sin();
  auto m = dmap({{a.sin(), a.sqrt()}, {n1.sin(), n1.sqrt()}});
  EXPECT_EQ(graph_rewrite(ret, pm_substitute(), {.ctx = &m, .bottom_up = true, .walk = true}), a.sin().sqrt());
}
TEST(TestWalkRewrite, test_walk_bottomup_no_fixed_point) {
  EXPECT_EQ(graph_rewrite(ci(3), bounce(), {.bottom_up = true, .walk = true}), ci(4));
}
TEST(TestWalkRewrite, test_walk_bottomup_visit_order) {
  std::vector<std::string> visited;
  graph_rewrite(ci(1) + ci(2), track_visit(), {.ctx = &visited, .bottom_up = true, .walk = true});
  EXPECT_EQ(visited, (std::vector<std::string>{"ADD", "1", "2"}));
}
TEST(TestWalkRewrite, test_walk_bottomup_unmatched_falls_through_to_children) {
  UOp a = var("a"), b = var("b"), c = var("c");
  auto m = dmap({{a, c}, {b, c}});
  EXPECT_EQ(graph_rewrite((a + 4) + (b + 5), pm_substitute(), {.ctx = &m, .bottom_up = true, .walk = true}), (c + 4) + (c + 5));
}
TEST(TestWalkRewrite, test_walk_bidirectional_visit_order) {
  Visit v;
  PatternMatcher bpm("bpm", {TG_RULE(UPat(GroupOp::all()).named("x"), [](Visit& ctx, UOp x) {
    ctx.push_back({vname(x), "bpm"});
    return UOp();
  })});
  PatternMatcher pm("pm", {TG_RULE(UPat(GroupOp::all()).named("x"), [](Visit& ctx, UOp x) {
    ctx.push_back({vname(x), "pm"});
    return UOp();
  })});
  graph_rewrite(ci(1) + ci(2), pm, {.ctx = &v, .bpm = &bpm, .walk = true});
  EXPECT_EQ(v, (Visit{{"ADD", "bpm"}, {"1", "bpm"}, {"1", "pm"}, {"2", "bpm"}, {"2", "pm"}, {"ADD", "pm"}}));
}
TEST(TestWalkRewrite, test_walk_bidirectional_bpm_short_circuits) {
  Visit v;
  PatternMatcher bpm("bpm", {TG_RULE(UPat(GroupOp::all()).named("x"), [](Visit& ctx, UOp x) {
    ctx.push_back({vname(x), "bpm"});
    if (x.op() == Ops::CONST && x.val() == PyConst(1)) return UOp::const_(PyConst(10), x.dtype());
    return UOp();
  })});
  PatternMatcher pm("pm", {TG_RULE(UPat(GroupOp::all()).named("x"), [](Visit& ctx, UOp x) {
    ctx.push_back({vname(x), "pm"});
    return UOp();
  })});
  UOp b = ci(2);
  UOp ret = graph_rewrite(ci(1) + b, pm, {.ctx = &v, .bpm = &bpm, .walk = true});
  EXPECT_EQ(std::count(v.begin(), v.end(), std::make_pair(std::string("1"), std::string("pm"))), 0);
  EXPECT_EQ(std::count(v.begin(), v.end(), std::make_pair(std::string("2"), std::string("pm"))), 1);
  EXPECT_EQ(ret, ci(10) + b);
}

TEST(TestGraphRewriteDeep, deep_chain_does_not_recurse) {
  // 100k-node chains occur; every walk is iterative
  UOp x = var("a");
  for (int i = 0; i < 100000; i++) x = x + 0;
  UOp r = graph_rewrite(x, symbolic_simple());
  EXPECT_EQ(r, var("a"));
  EXPECT_EQ(x.toposort().size(), 100003u);
}

// Rule prefilters. A rule whose pattern needs an Invalid CONST (pm_data_invalid's, the gated LOAD/STORE folds) is
// not tried on a node without one in its slice; a rule whose pattern binds one name under two srcs, up to 2 levels
// below each (x+x, (y+x)+x, x+x*c, where(c, v, v), (y+x*c)+x, x*c0+x*c1), is not tried on a node whose srcs reach no
// common node that deep. The pattern analyses, the flag nodes get at birth, and a rewrite's results with the
// prefilters (nothing counted) and without them (TRACK_MATCH_STATS=1) on random gated index graphs
TEST(TestRulePrefilters, patterns_flags_and_results) {
  UPat inv = UPat(Ops::CONST).arg(Arg::invalid());
  auto rule = [](const UPat& p) {
    static std::vector<PatternMatcher> keep;
    keep.push_back(PatternMatcher("t", {TG_RULE(p, []() { return UOp(); })}));
    return keep.back().rules()[0];
  };
  auto needs = [&](const UPat& p) { return rule(p)->needs_invalid; };
  // the (d1, d2) depths below two srcs at which one name binds, as d1 * 3 + d2 (the cheapest pair), -1 for none
  auto shared = [&](const UPat& p) { return (int)rule(p)->shared_src_depths; };
  UPat x = UPat::var("x"), y = UPat::var("y"), c = UPat::cvar("c"), c0 = UPat::cvar("c0"), c1 = UPat::cvar("c1");
  EXPECT_EQ(shared(x + x), 0);
  EXPECT_EQ(shared((y + x) + x), 1);
  EXPECT_EQ(shared(x + x * c), 1);
  EXPECT_EQ(shared(UPat::var().where(UPat::var("v"), UPat::var("v"))), 0);
  EXPECT_EQ(shared((y + x * c) + x), 2);
  EXPECT_EQ(shared(x * c0 + x * c1), 4);
  EXPECT_EQ(shared((y + x) + x * c), 4);
  EXPECT_EQ(shared((y + x * c0) + x * c1), 5);
  EXPECT_EQ(shared(((y + x * c0) * c1) + x * c), -1);   // 3 levels below the first src: not checked
  EXPECT_EQ(shared(((y + x * c0) * c1) + (x + y)), 5);  // y binds at depths 2 and 1, x at 3 and 1: (1, 2)
  EXPECT_EQ(shared(x + y), -1);
  EXPECT_EQ(shared((x + c1) + y), -1);
  EXPECT_EQ(shared(x * 0), -1);
  EXPECT_EQ(shared(UPat(Ops::ADD).src(UPat::any_of({x, y}), x)), -1);
  EXPECT_EQ(shared(UPat(Ops::ADD).src(UPat::any_of({x + c, y}), x)), -1);  // alternatives: no fixed depth
  // the deep ones fold, and the prefilter lets the nodes that cannot fold pass untried
  UOp va = var("a"), vb = var("b");
  EXPECT_EQ(graph_rewrite((vb + va * ci(3)) + va, sym()), graph_rewrite(vb + va * ci(4), sym()));
  EXPECT_EQ(graph_rewrite(va * ci(3) + va * ci(5), sym()), graph_rewrite(va * ci(8), sym()));
  EXPECT_EQ(graph_rewrite((vb + va * ci(3)) + va * ci(2), sym()), graph_rewrite(vb + va * ci(5), sym()));
  // a CONST src of a given arg: x+0, x*1 (either order), where(c, 0, x); not for a cvar or one ordering without it
  auto src_const = [&](const UPat& p) { return rule(p)->needs_src_const; };
  EXPECT_TRUE(src_const(UPat(Ops::ADD).perm(UPat::var("x"), UPat::const_(PyConst(0)))).py_eq(Arg(PyConst(0))));
  EXPECT_TRUE(src_const(UPat::var("x") * 1).py_eq(Arg(PyConst(1))));
  EXPECT_TRUE(src_const(UPat::var("c").where(UPat::const_(PyConst(0)), UPat::var("x"))).py_eq(Arg(PyConst(0))));
  EXPECT_TRUE(src_const(UPat::var("x") + UPat::cvar("c")).is_none());
  EXPECT_TRUE(src_const(UPat::var("x") + UPat::var("y")).is_none());
  EXPECT_TRUE(src_const(UPat(Ops::ADD).src(UPat::var("x"), UPat::any_of({UPat::const_(PyConst(0)), UPat::var("y")})))
                  .is_none());
  EXPECT_TRUE(needs(inv));
  EXPECT_TRUE(needs(UPat(Ops::ADD).named("a").perm(inv, UPat())));
  EXPECT_TRUE(needs(UPat(Ops::INDEX).src(UPat(), inv).any_len()));
  EXPECT_TRUE(needs(UPat(Ops::LOAD).src(UPat(Ops::INDEX).src(UPat(), inv).any_len().or_casted()).any_len()));
  EXPECT_FALSE(needs(UPat::var("x") + UPat::var("x")));
  EXPECT_FALSE(needs(UPat(Ops::ADD).src(UPat::any_of({inv, UPat(Ops::CONST)}), UPat())));  // an alternative needs none
  EXPECT_TRUE(needs(UPat(Ops::ADD).src(UPat::any_of({inv, inv.cast()}), UPat())));
  EXPECT_FALSE(needs(UPat(Ops::SINK).src_all(inv)));  // no srcs at all matches too
  EXPECT_FALSE(needs(UPat(Ops::CONST)));

  UOp a = var("a"), gate = a < ci(5);
  UOp gated = gate.where(a * ci(4), UOp::invalid());
  auto flagged = [](const UOp& u) { return (u.node()->flags.load() & detail::kSliceInvalid) != 0; };
  EXPECT_TRUE(flagged(UOp::invalid()));
  EXPECT_TRUE(flagged(gated + ci(1)));
  EXPECT_FALSE(flagged(a * ci(4) + gate.cast(dtypes::weakint)));

  std::mt19937 rng(77);
  int folded = 0;
  for (int trial = 0; trial < 300; trial++) {
    std::vector<UOp> nodes = {a, var("b"), ci(3), gated, var("b").ge(ci(2)).where(a, UOp::invalid())};
    grow_random_graph(rng, nodes, 4 + (int)(rng() % 10));
    UOp root = UOp::sink(std::vector<UOp>(nodes.end() - 2, nodes.end()));
    UOp fast, counted;
    {
      Context c({{"TRACK_MATCH_STATS", 0}});
      fast = graph_rewrite(root, sym());
    }
    {
      Context c({{"TRACK_MATCH_STATS", 1}});
      counted = graph_rewrite(root, sym());
    }
    EXPECT_EQ(fast, counted) << "trial " << trial;
    folded += !(fast == root);
  }
  EXPECT_GT(folded, 100);
}
