// Unit tests of lib/schedule beyond the goldens: the schedule cache (SCACHE) and its DEBUG line, pm_flatten_linear,
// errors a user can cause (bind mismatch), and apply_reshape's constant shortcut.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "lib/helpers.h"
#include "lib/schedule/indexing.h"
#include "lib/schedule/schedule.h"
#include "lib/uop/kernel_info.h"
#include "lib/uop/rewrite.h"
#include "tests/support/schedule_goldens.h"
#include "tests/unit/random_movement.h"

using namespace tg;

namespace {
const SchedCase& golden(const std::string& prog) {
  static const std::vector<SchedCase> g = load_schedule_goldens(TG_TEST_DATA "/schedule_goldens.txt");
  for (const auto& c : g)
    if (c.prog == prog && c.nth == 0) return c;
  throw std::runtime_error("no golden " + prog);
}
}  // namespace

// lower_sink_to_linear: with SCACHE the second schedule of the same function is a cache hit giving the same kernels
TEST(Schedule, CacheHit) {
  const SchedCase& c = golden("softmax");
  Context ctx({{"SCACHE", 1}, {"DEBUG", 1}});
  testing::internal::CaptureStdout();
  LinearWithVars a = create_linear_with_vars(c.big_sink);
  LinearWithVars b = create_linear_with_vars(c.big_sink);
  std::string out = testing::internal::GetCapturedStdout();
  ASSERT_EQ(a.linear.nsrc(), 3u);
  ASSERT_EQ(b.linear.nsrc(), 3u);
  for (size_t i = 0; i < 3; i++) EXPECT_EQ(a.linear.src(i).src(0), b.linear.src(i).src(0)) << "kernel " << i;
  // "scheduled     3 kernels in     x.xx ms | CACHE MISS 1234abcd | ..." then " cache hit" with the same key
  size_t miss = out.find("scheduled     3 kernels in"), m2 = out.find("| CACHE MISS "), hit = out.find("|  cache hit ");
  ASSERT_NE(miss, std::string::npos) << out;
  ASSERT_NE(m2, std::string::npos) << out;
  ASSERT_NE(hit, std::string::npos) << out;
  EXPECT_EQ(out.substr(m2 + 13, 8), out.substr(hit + 13, 8)) << out;
}

TEST(Schedule, NoCacheWithoutSCACHE) {
  const SchedCase& c = golden("softmax");
  Context ctx({{"SCACHE", 0}, {"DEBUG", 1}});
  testing::internal::CaptureStdout();
  create_linear_with_vars(c.big_sink);
  create_linear_with_vars(c.big_sink);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out.find("cache hit"), std::string::npos) << out;
  EXPECT_NE(out.find("CACHE MISS"), std::string::npos) << out;
}

TEST(Schedule, FlattenLinear) {
  UOp a = UOp::const_(PyConst(1)), b = UOp::const_(PyConst(2)), c = UOp::const_(PyConst(3));
  UOp inner = UOp(Ops::LINEAR, DType(), {b, c});
  UOp lin = UOp(Ops::LINEAR, DType(), {a, inner, a});
  UOp got = graph_rewrite(lin, pm_flatten_linear());
  EXPECT_EQ(got, UOp(Ops::LINEAR, DType(), {a, b, c, a}));
  // without a LINEAR src it does nothing
  UOp flat = UOp(Ops::LINEAR, DType(), {a, b});
  EXPECT_EQ(graph_rewrite(flat, pm_flatten_linear()), flat);
}

// var_vals: two bindings of one Variable to different values is a user error
TEST(Schedule, BindMismatch) {
  const SchedCase& c = golden("symbolic_shrink");
  ASSERT_EQ(c.vars.size(), 1u);
  UOp bound;
  for (size_t i = 1; i < c.big_sink.nsrc(); i++)
    if (c.big_sink.src(i).is_bound_var()) bound = c.big_sink.src(i);
  ASSERT_TRUE(bound);
  auto [v, val] = bound.unbind();
  std::vector<UOp> src(c.big_sink.src().begin(), c.big_sink.src().end());
  src.push_back(v.bind(val + 1));  // an extra (unused) argument binding the same Variable to another value
  UOp sink = c.big_sink.with_src(src);
  Context ctx({{"SCACHE", 0}});
  try {
    create_linear_with_vars(sink);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "bind mismatch on " + v.expr() + ", " + std::to_string((long long)val) +
                                         " != " + std::to_string((long long)(val + 1)));
  }
  // the same value twice is fine
  src.back() = v.bind(val);
  LinearWithVars lv = create_linear_with_vars(c.big_sink.with_src(src));
  EXPECT_EQ(lv.var_vals.at(v.expr()), val);
}

// the JIT hook: a capturer takes the schedule (before memory planning) and an empty LINEAR comes back
TEST(Schedule, CapturingHook) {
  struct Capture : LinearCapturer {
    std::vector<UOp> linears;
    void add_linear(const UOp& linear, const std::map<std::string, pyint>&) override { linears.push_back(linear); }
  } cap;
  const SchedCase& c = golden("softmax");
  Context ctx({{"SCACHE", 0}});
  capturing().push_back(&cap);
  LinearWithVars lv = create_linear_with_vars(c.big_sink);
  capturing().pop_back();
  EXPECT_EQ(lv.linear.nsrc(), 0u);
  ASSERT_EQ(cap.linears.size(), 1u);
  EXPECT_EQ(cap.linears[0].nsrc(), 3u);
  // with CAPTURING=0 the capturer is bypassed
  Context off({{"CAPTURING", 0}});
  capturing().push_back(&cap);
  lv = create_linear_with_vars(c.big_sink);
  capturing().pop_back();
  EXPECT_EQ(lv.linear.nsrc(), 3u);
  EXPECT_EQ(cap.linears.size(), 1u);
}

// the cache key is the function's structure: bound values are CALL args, so re-binding a Variable hits the cache
TEST(Schedule, CacheHitAcrossBoundValues) {
  static const std::vector<SchedCase> g = load_schedule_goldens(TG_TEST_DATA "/schedule_goldens.txt");
  std::vector<const SchedCase*> cs;
  for (const auto& c : g)
    if (c.prog == "symbolic_rebind") cs.push_back(&c);
  ASSERT_EQ(cs.size(), 3u);
  Context ctx({{"SCACHE", 1}, {"DEBUG", 1}});
  testing::internal::CaptureStdout();
  std::vector<LinearWithVars> lvs;
  for (const SchedCase* c : cs) lvs.push_back(create_linear_with_vars(c->big_sink));
  std::string out = testing::internal::GetCapturedStdout();
  size_t hits = 0, misses = 0;
  for (size_t p = out.find("cache hit"); p != std::string::npos; p = out.find("cache hit", p + 1)) hits++;
  for (size_t p = out.find("CACHE MISS"); p != std::string::npos; p = out.find("CACHE MISS", p + 1)) misses++;
  EXPECT_EQ(hits, 2u) << out;
  EXPECT_LE(misses, 1u) << out;  // 0 when an earlier test already scheduled this function
  for (size_t i = 0; i < 3; i++) {
    ASSERT_EQ(cs[i]->vars.size(), 1u);
    EXPECT_EQ(lvs[i].var_vals.at(cs[i]->vars[0].first), cs[i]->vars[0].second);
    EXPECT_EQ(normalized(lvs[i].linear, cs[i]->big_sink), normalized(cs[i]->linear, cs[i]->big_sink)) << i;
  }
}

// apply_reshape (and the RESHAPE movement op) of constant indices (what the devectorizer asks for every vector lane)
// computes the constants itself
// when nothing is counted; they equal what the symbolic rewrite folds the index arithmetic to (forced with
// TRACK_MATCH_STATS=1), negative indices included (python's floor division and modulo)
TEST(Schedule, ApplyReshapeOfConstantsEqualsTheRewrite) {
  uint64_t seed = 12345;
  auto rnd = [&](int64_t lo, int64_t hi) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (int64_t)((seed >> 33) % (uint64_t)(hi - lo + 1));
  };
  int checked = 0;
  for (int t = 0; t < 300; t++) {
    // a reshape between two shapes of the same size, built from the same factors in another grouping
    std::vector<int64_t> factors;
    for (int64_t k = rnd(1, 5); k > 0; k--) factors.push_back(rnd(1, 7));
    auto group = [&](std::vector<int64_t> f) {
      Shape sh;
      while (!f.empty()) {
        size_t take = (size_t)rnd(1, (int64_t)f.size());
        int64_t p = 1;
        for (size_t i = 0; i < take; i++) p *= f[i];
        sh.push_back(sint(p));
        f.erase(f.begin(), f.begin() + (long)take);
      }
      return sh;
    };
    Shape in = group(factors), out = group(factors);
    std::vector<UOp> idx;
    for (size_t i = 0; i < out.size(); i++) idx.push_back(UOp::const_(PyConst(rnd(-3, out[i].i() + 2))));
    UOp urngs = UOp::sink(idx);
    UOp fast, slow;
    std::vector<UOp> fast_mop, slow_mop;
    MArg m;
    m.shape = out;
    {
      Context c({{"TRACK_MATCH_STATS", 0}});
      fast = apply_reshape(in, out, urngs);
      fast_mop = apply_movement_op(Ops::RESHAPE, in, m, idx);
    }
    {
      Context c({{"TRACK_MATCH_STATS", 1}});
      slow = apply_reshape(in, out, urngs);
      slow_mop = apply_movement_op(Ops::RESHAPE, in, m, idx);
    }
    ASSERT_EQ(fast, slow) << "reshape " << in.size() << " <- " << out.size() << " dims, case " << t;
    ASSERT_EQ(fast_mop, slow_mop) << "movement op, case " << t;
    ASSERT_EQ(fast_mop, std::vector<UOp>(fast.src().begin(), fast.src().end()));
    for (const UOp& a : fast.src()) ASSERT_EQ(a.op(), Ops::CONST);
    checked++;
  }
  EXPECT_EQ(checked, 300);
}

// pm_mops reads a RESHAPE over constant indices, an EXPAND or a PERMUTE straight from the node
// (apply_movement_op_direct); it must give what apply_movement_op with the node's marg gives, on random shapes and
// constant indices
TEST(Indexing, DirectMovementIndexEqualsApplyMovementOp) {
  std::mt19937 rng(77);
  int compared = 0;
  for (int trial = 0; trial < 300; trial++) {
    UOp base = test_util::random_buffer(rng);
    UOp mop = test_util::random_movement(rng, base, trial % 3, trial % 2 == 1);
    if (!GroupOp::Movement.has(mop.op())) continue;
    std::vector<UOp> idx;
    for (const sint& s : mop.shape()) idx.push_back(UOp::const_(PyConst((pyint)(rng() % s.i()))));
    auto direct = apply_movement_op_direct(mop, idx);
    ASSERT_TRUE(direct.has_value()) << op_repr(mop.op());
    std::vector<UOp> general = apply_movement_op(mop.op(), mop.src(0).shape(), marg(mop), idx);
    ASSERT_EQ(direct->size(), general.size());
    for (size_t i = 0; i < general.size(); i++) EXPECT_EQ((*direct)[i], general[i]) << "trial " << trial;
    compared++;
  }
  EXPECT_GT(compared, 200);
}
