// The UOp core itself: hash-consing, lifetime, thread-safe interning, printing, python value semantics, SPEC=2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

#include "lib/mixin/helpers.h"
#include "lib/uop/rewrite.h"
#include "lib/uop/spec.h"
#include "lib/uop/symbolic.h"

using namespace tg;

static UOp ci(pyint v) { return UOp::const_(PyConst(v)); }

TEST(UOpCore, OpsAreFoundByTheirNamesWithOrWithoutThePrefix) {
  for (int i = 1; i <= NUM_OPS; i++) {
    const Ops op = (Ops)i;
    EXPECT_EQ(op_from_name(op_name(op)), op);
    EXPECT_EQ(op_from_name(op_repr(op)), op);
  }
  EXPECT_THROW(op_from_name("NOT_AN_OP"), Error);
  EXPECT_THROW(op_from_name("Ops."), Error);
  EXPECT_THROW(op_from_name("add"), Error);  // names are case-sensitive, as the reference's Ops[...]
}

TEST(UOpCore, HashConsingGivesTheSameNode) {
  UOp a = UOp::variable("a", 0, 10);
  EXPECT_EQ(a + 4, a + 4);
  EXPECT_FALSE((a + 4) == (a + 5));
  // derived and explicit dtype are the same node
  EXPECT_EQ(UOp(Ops::ADD, DType(), {a, ci(1)}), UOp(Ops::ADD, dtypes::weakint, {a, ci(1)}));
  // float consts are bit exact: 0.0 and -0.0 differ, nans are one node
  EXPECT_FALSE(UOp::const_(PyConst(0.0)) == UOp::const_(PyConst(-0.0)));
  EXPECT_EQ(UOp::const_(PyConst(std::nan(""))), UOp::const_(PyConst(-std::nan(""))));
  // the tag is part of the identity
  EXPECT_FALSE((a + 1).rtag(Arg(1)) == (a + 1));
  EXPECT_EQ((a + 1).rtag(Arg(1)).rtag(Arg()), a + 1);
}

TEST(UOpCore, NodesDieWithTheirLastReference) {
  size_t before = live_uop_count();
  {
    UOp a = UOp::variable("lifetime_var", 0, 1000);
    UOp x = a;
    for (int i = 0; i < 1000; i++) x = x * 3 + i;
    EXPECT_GE(live_uop_count(), before + 1000);
  }
  EXPECT_EQ(live_uop_count(), before);
}

TEST(UOpCore, ThreadsInterningAtOnceShareOneNodePerContent) {
  // 4 threads build the same 4 x 6000 nodes in different orders while they make and drop temporaries: every thread
  // must get the same node for the same content, while the intern table grows under them, and all die at the end
  size_t before = live_uop_count();
  constexpr int kThreads = 4, kN = 6000;
  std::vector<std::vector<UOp>> got(kThreads);
  {
    UOp v = UOp::variable("interned_by_threads", 0, 100);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++) {
      threads.emplace_back([&, t] {
        std::vector<UOp>& out = got[t];
        out.resize(4 * kN);
        for (int k = 0; k < 4 * kN; k++) {
          int i = (t % 2 ? 4 * kN - 1 - k : k);  // half the threads go backwards
          int chain = i / kN, j = i % kN;
          out[i] = (v * (chain + 2) + j) * 7;
          UOp tmp = out[i] + (1000000 + t);  // a node only this thread makes, dropped at once
          EXPECT_EQ(tmp.src(0), out[i]);
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 1; t < kThreads; t++)
      for (int i = 0; i < 4 * kN; i++) ASSERT_TRUE(got[t][i] == got[0][i]) << "thread " << t << ", node " << i;
    // and a node made again now is the same node
    EXPECT_TRUE(((v * 3 + 5) * 7) == got[0][kN + 5]);
    EXPECT_GE(live_uop_count(), before + 2 * 4 * kN);
    got.clear();
  }
  EXPECT_EQ(live_uop_count(), before);
}

TEST(UOpCore, SmallIntConstsAreKeptAndCountedApart) {
  // a small weakint/int32 const is the node interning would give, kept for good; others are made as before
  size_t before = live_uop_count();
  for (DType dt : {dtypes::weakint, dtypes::int32}) {
    for (int v : {-32, -1, 0, 7, 1023}) {
      UOp a = UOp::const_(PyConst(v), dt);
      EXPECT_EQ(a, UOp(Ops::CONST, dt, std::span<const UOp>{}, Arg(dt.const_(PyConst(v)))));
      EXPECT_EQ(a, UOp::const_(PyConst(v), dt));
      EXPECT_EQ(a.dtype(), dt);
      EXPECT_EQ(a.val(), PyConst(v));
    }
  }
  EXPECT_EQ(UOp::const_(PyConst(1024), dtypes::int32).val(), PyConst(1024));  // outside the table
  EXPECT_EQ(UOp::const_(PyConst(3), dtypes::int64).dtype(), dtypes::int64);   // another dtype
  EXPECT_TRUE(UOp::const_(PyConst(true)).dtype() == dtypes::bool_);           // bools are not ints here
  EXPECT_EQ(live_uop_count(), before);  // the kept ones are not counted, the others died
}

// the table's constants keep no count: threads that copy, build over and drop them write nothing of theirs, and they
// stay alive and the same node whatever the counts would have been
TEST(UOpCore, KeptConstsAreNotCounted) {
  UOp c = UOp::const_(PyConst(7));
  detail::UOpNode* n = c.node();
  EXPECT_FALSE(detail::counted(n));
  EXPECT_TRUE(detail::counted(UOp::variable("kept_v", 0, 9).node()));
  size_t before = live_uop_count();
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++)
    ts.emplace_back([n] {
      for (int i = 0; i < 20000; i++) {
        UOp k = UOp::const_(PyConst(7)), copy = k;
        UOp sum = copy + UOp::variable("kept_v", 0, 9);  // a node over it: built and released
        EXPECT_EQ(sum.src(0).node(), n);
      }
    });
  for (auto& t : ts) t.join();
  c = UOp();
  EXPECT_EQ(UOp::const_(PyConst(7)).node(), n);
  EXPECT_EQ(live_uop_count(), before);
}

// A node whose shape is () by its srcs' flags is marked when it is made (node_store.cpp scalar_at_birth); every other
// node computes its shape when asked. Both must give the shape compute_shape gives.
TEST(UOpCore, ShapesKnownAtBirthAreTheComputedShapes) {
  auto sh = [](const UOp& u) { return mixin::shape_str(u.shape()); };
  UOp v = UOp::variable("birth_v", 0, 9);
  EXPECT_EQ(sh(v + 1), "()");
  EXPECT_EQ(sh((v < 3).where(v, ci(2)).cast(dtypes::float32)), "()");
  // a 1-d buffer indexed by one scalar is scalar, and so is what is loaded from it and computed over that
  UOp p1 = UOp::param(0, dtypes::float32, Shape{16});
  EXPECT_EQ(sh(p1), "(16,)");
  UOp l1 = p1.index(ci(3)).load();
  EXPECT_EQ(sh(l1), "()");
  EXPECT_EQ(sh((l1 * l1).sqrt()), "()");
  // a 2-d buffer indexed by one index keeps its last dim, however it was asked
  UOp p2 = UOp::param(1, dtypes::float32, Shape{4, 5});
  EXPECT_EQ(sh(p2), "(4, 5)");
  UOp row = p2.index(ci(1)).load();
  EXPECT_EQ(sh(row + row), "(5,)");
  UOp p3 = UOp::param(2, dtypes::float32, Shape{4, 5});  // its shape not asked before the INDEX is made
  EXPECT_EQ(sh(p3.index(ci(2)).load() * 2.0), "(5,)");
  // a 1-d buffer whose shape nobody asked: its INDEX by a scalar is born scalar (no shape computed later, as the
  // renderer asks every LOAD's and STORE's), and so is the LOAD of it
  auto born_scalar = [](const UOp& u) { return (u.node()->flags.load() & detail::kScalarShape) != 0; };
  UOp p5 = UOp::param(4, dtypes::float32, Shape{8});
  UOp i5 = p5.index(v);
  EXPECT_TRUE(born_scalar(i5));
  EXPECT_TRUE(born_scalar(i5.load()));
  EXPECT_EQ(sh(i5), "()");
  EXPECT_FALSE(born_scalar(UOp::param(5, dtypes::float32, Shape{4, 5}).index(v)));  // keeps a dim
  // after codegen's casted consts a buffer's size is CAST(int, CONST): still one dim, its INDEX still born scalar
  UOp p6 = UOp::param(6, dtypes::float32, Shape{8});
  UOp p6c = p6.with_src(std::vector<UOp>{p6.src(0).cast(dtypes::int32)});
  ASSERT_EQ(p6c.src(0).op(), Ops::CAST);
  EXPECT_TRUE(born_scalar(p6c.index(v)));
  EXPECT_EQ(sh(p6c.index(v)), "()");
  EXPECT_EQ(sh(p6c), "(8,)");
  // through AFTER and LOAD, which have their src's shape: a register buffer's INDEX after a store is born scalar too
  UOp p7 = UOp::param(7, dtypes::float32, Shape{4});
  UOp st7 = p7.index(ci(0)).store(UOp::const_(PyConst(1.0), dtypes::float32));
  UOp i7 = p7.after({st7}).index(v);
  EXPECT_TRUE(born_scalar(i7));
  EXPECT_EQ(sh(i7), "()");
  EXPECT_TRUE(born_scalar(i7.load() * 2.0));
  EXPECT_FALSE(born_scalar(UOp::param(8, dtypes::float32, Shape{4, 5}).after({st7}).index(v)));  // keeps a dim
  std::vector<UOp> both{ci(1), ci(2)};
  UOp p4 = UOp::param(3, dtypes::float32, Shape{4, 5});
  EXPECT_EQ(sh(p4.index(both).load()), "()");
  // elementwise over a stack has its shape, not ()
  std::vector<UOp> lanes{v, v + 1};
  UOp st = UOp::stack(lanes);
  EXPECT_EQ(sh(st + st), "(2,)");
  EXPECT_EQ(sh(st.cast(dtypes::float32).exp2()), "(2,)");
  EXPECT_EQ(sh(p1.index(st).load()), "(2,)");
}

// codegen's casted consts spell every int literal CAST(int dtype, CONST); ssimplify takes such a node's value without
// running simplify: it must be the value simplify folds it to (truncated to the dtype where it does not fit)
TEST(UOpCore, SsimplifyOfACastedIntConstIsWhatSimplifyFoldsItTo) {
  const std::vector<std::pair<DType, pyint>> cases{{dtypes::int32, 8},
                                                   {dtypes::int8, 300},
                                                   {dtypes::uint8, -1},
                                                   {dtypes::int64, (pyint)1 << 40},
                                                   {dtypes::weakint, 5}};
  for (const auto& [dt, v] : cases) {
    UOp c(Ops::CAST, dt, std::vector<UOp>{ci(v)});
    UOp f = c.simplify();
    ASSERT_TRUE(f.op() == Ops::CONST || (f.op() == Ops::CAST && f.src(0).op() == Ops::CONST)) << f.repr();
    pyint want = f.op() == Ops::CONST ? f.val().as_int() : f.dtype().const_(f.src(0).val()).as_int();
    sint got = c.ssimplify();
    ASSERT_TRUE(got.is_int()) << dt.repr();
    EXPECT_EQ(got.i(), want) << dt.repr() << " " << (long long)v;
  }
}

// The first thread to use UOps owns them: while no other thread uses any, its reference counts and interning skip
// atomic read-modify-writes. A thread that starts using UOps meanwhile (or a worker pool section) makes every
// operation atomic after a handshake with the owner (node_store.cpp). Each case runs in a child process, whose one
// thread owns UOps from the start; a lost update of a count shows as a count off at the end.
namespace {
// the owner and `helpers` threads copy and build over one node `rounds` times each; the helpers start while the
// owner is busy. The node's count must be what it was before, and so must the number of live nodes
bool counts_survive_threads_joining(int helpers, bool as_pool_section) {
  alarm(60);  // a lost unlock of the intern table would spin forever: end the child instead
  if (detail::t_uop_role != 1 || detail::g_uop_sharers.load() != 0) return false;  // not the plain mode
  UOp v = UOp::variable("owned_v", 0, 9);
  detail::UOpNode* n = v.node();
  const uint32_t rc_before = n->rc.load();
  const size_t live_before = live_uop_count();
  constexpr int rounds = 200000;
  std::atomic<bool> go{false};
  auto work = [&](int salt) {
    for (int i = 0; i < rounds; i++) {
      UOp c = v, d = c;
      UOp s = (d + (i % 7 + salt)) * c;  // nodes over v, made and released (shared by the threads: same content)
    }
  };
  if (as_pool_section) parallel_hooks().section_begin();
  std::vector<std::thread> ts;
  for (int h = 0; h < helpers; h++)
    ts.emplace_back([&, h] {
      if (as_pool_section) parallel_hooks().worker_start();
      while (!go.load()) {
      }
      work(h);
    });
  go.store(true);
  work(0);
  for (auto& t : ts) t.join();
  if (as_pool_section) parallel_hooks().section_end();
  // after a section the owner is alone again: plain, and still exact
  if (as_pool_section && detail::g_uop_sharers.load() != 0) return false;
  work(1);
  return n->rc.load() == rc_before && live_uop_count() == live_before;
}
}  // namespace

// threads that join while the owner releases long chains (one long plain operation each: the newcomer's wait), build
// the same content and drop it: the table and the counts stay exact
static bool counts_survive_joins_during_releases() {
  alarm(60);
  if (detail::t_uop_role != 1 || detail::g_uop_sharers.load() != 0) return false;
  const size_t live_before = live_uop_count();
  UOp v = UOp::variable("chain_v", 0, 9);
  auto chain = [&](int n, int salt) {
    UOp x = v;
    for (int i = 0; i < n; i++) x = x + (i % 5 + salt);
    return x;
  };
  std::atomic<int> started{0};
  std::vector<std::thread> ts;
  for (int round = 0; round < 40; round++) {
    UOp c = chain(3000, 1);  // released at the end of the round: 3000 nodes in one release
    if (round % 10 == 5)
      ts.emplace_back([&] {
        started++;
        for (int k = 0; k < 20; k++) UOp mine = chain(500, 1);  // the owner's content, shared with it
      });
  }
  for (auto& t : ts) t.join();
  v = UOp();
  return started.load() == 4 && live_uop_count() == live_before;
}

TEST(UOpCore, AThreadJoiningTheOwnerLosesNoCount) {
  EXPECT_EXIT(std::exit(counts_survive_threads_joining(1, false) ? 0 : 1), ::testing::ExitedWithCode(0), "");
}
TEST(UOpCore, ThreadsJoiningDuringLongReleasesLoseNothing) {
  EXPECT_EXIT(std::exit(counts_survive_joins_during_releases() ? 0 : 1), ::testing::ExitedWithCode(0), "");
}
TEST(UOpCore, APoolSectionLosesNoCountAndTheOwnerRunsPlainAfter) {
  EXPECT_EXIT(std::exit(counts_survive_threads_joining(2, true) ? 0 : 1), ::testing::ExitedWithCode(0), "");
}

TEST(UOpCore, AnyInBackwardSliceWithSelf) {
  UOp v = UOp::variable("slice_pred", 0, 10);
  UOp x = (v * 3 + 4).maximum(v);
  auto is_mul = [](const UOp& u) { return u.op() == Ops::MUL; };
  auto is_max = [](const UOp& u) { return u.op() == Ops::MAX; };
  auto is_sub = [](const UOp& u) { return u.op() == Ops::SUB; };
  EXPECT_TRUE(x.any_in_backward_slice_with_self(is_mul));   // below
  EXPECT_TRUE(x.any_in_backward_slice_with_self(is_max));   // self
  EXPECT_FALSE(x.any_in_backward_slice_with_self(is_sub));  // nowhere
  EXPECT_FALSE(v.any_in_backward_slice_with_self(is_mul));  // not above
  // with the ops pred can hold for: the same answers; the walk skips slices without them
  auto is_small_const = [](const UOp& u) { return u.op() == Ops::CONST && py_lt(u.val(), PyConst(4)); };
  EXPECT_TRUE(x.any_in_backward_slice_with_self(is_mul, OpSet{Ops::MUL}));
  EXPECT_TRUE(x.any_in_backward_slice_with_self(is_max, OpSet{Ops::MAX}));
  EXPECT_FALSE(x.any_in_backward_slice_with_self(is_sub, OpSet{Ops::SUB}));
  EXPECT_FALSE(v.any_in_backward_slice_with_self(is_mul, OpSet{Ops::MUL}));
  EXPECT_TRUE(x.any_in_backward_slice_with_self(is_small_const, OpSet{Ops::CONST}));  // the 3 (4 is not < 4)
  EXPECT_FALSE((v + 4).any_in_backward_slice_with_self(is_small_const, OpSet{Ops::CONST}));
  EXPECT_FALSE(x.any_in_backward_slice_with_self(is_mul, OpSet{Ops::ADD}));  // pred's ops said: only ADDs tested
}

// in_backward_slice_with_self skips srcs whose slice_ops lack x's op, op_in_backward_slice_with_self reads slice_ops:
// both must agree with the toposort they stand for, also with enter_calls=False (a CALL's body is not entered)
TEST(UOpCore, BackwardSliceQueriesAgreeWithToposort) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 100; trial++) {
    std::vector<UOp> nodes = {UOp::variable("q0", 0, 9), UOp::variable("q1", 0, 9), ci(2)};
    for (int i = 0; i < 12; i++) {
      const UOp &a = nodes[rng() % nodes.size()], &b = nodes[rng() % nodes.size()];
      switch (rng() % 4) {
        case 0:
          nodes.push_back(a + b);
          break;
        case 1:
          nodes.push_back(a * b);
          break;
        case 2:
          nodes.push_back(a.maximum(b));
          break;
        default:
          nodes.push_back(UOp(Ops::CALL, a.dtype(), {a, b}));
          break;  // src 0 is the body
      }
    }
    for (size_t r = 0; r < nodes.size(); r++)
      for (bool enter_calls : {true, false}) {
        std::vector<UOp> topo = nodes[r].toposort(nullptr, enter_calls);
        if (enter_calls) {  // the borrowed toposort lists the same nodes in the same order
          NodeList borrowed = nodes[r].toposort_borrowed();
          ASSERT_EQ(borrowed.size(), topo.size());
          for (size_t i = 0; i < topo.size(); i++) EXPECT_EQ(borrowed[i], topo[i]) << "trial " << trial;
        }
        for (const UOp& x : nodes) {
          bool want = std::find(topo.begin(), topo.end(), x) != topo.end();
          EXPECT_EQ(nodes[r].in_backward_slice_with_self(x, enter_calls), want) << "trial " << trial;
        }
        if (enter_calls)
          for (Ops op : {Ops::ADD, Ops::MUL, Ops::MAX, Ops::CALL, Ops::CONST}) {
            bool want = std::any_of(topo.begin(), topo.end(), [op](const UOp& u) { return u.op() == op; });
            EXPECT_EQ(nodes[r].op_in_backward_slice_with_self(OpSet(op)), want) << "trial " << trial;
          }
      }
  }
}

TEST(UOpCore, DeepChainsBuildWalkAndDieWithoutRecursion) {
  size_t before = live_uop_count();
  {
    UOp x = UOp::variable("deep", 0, 1);
    for (int i = 0; i < 200000; i++) x = x + 1;
    EXPECT_EQ(x.toposort().size(), 200000u + 3);  // the ADDs, one shared const, the variable and its shape arg
    EXPECT_EQ(x.vmax(), PyConst(200001));
    EXPECT_TRUE(x.op_in_backward_slice_with_self(Ops::BUFFER));
  }
  EXPECT_EQ(live_uop_count(), before);
}

TEST(UOpCore, InterningIsThreadSafe) {
  // every thread builds the same expressions: all must end up as the same nodes
  std::vector<UOp> results(4);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++)
    ts.emplace_back([&results, t] {
      UOp a = UOp::variable("shared", 0, 100);
      UOp acc = a;
      for (int i = 0; i < 20000; i++) {
        acc = (acc + (i % 7)) * 2;
        if (i % 100 == 0) acc = a + i;  // drop references so nodes die and are re-created concurrently
      }
      results[t] = acc;
    });
  for (auto& th : ts) th.join();
  for (int t = 1; t < 4; t++) EXPECT_EQ(results[t], results[0]);
}

TEST(UOpCore, ReprIsThePrettyPrintFormat) {
  UOp a = UOp::variable("a", 0, 8);
  UOp x = a + a;
  std::string r = x.repr();
  EXPECT_EQ(r.rfind("UOp(Ops.ADD, dtypes.weakint, arg=None, src=(\n  x0:=UOp(Ops.BUFFER", 0), 0u) << r;
  EXPECT_NE(r.find("\n  x0,))"), std::string::npos) << r;
  EXPECT_EQ(UOp::const_(PyConst(1.5)).repr(), "UOp(Ops.CONST, dtypes.weakfloat, arg=ConstFloat(1.5), src=())");
}

TEST(UOpCore, ArgsCompareLikePython) {
  EXPECT_TRUE(Arg(1).py_eq(Arg(1.0)));
  EXPECT_TRUE(Arg(1).py_eq(Arg(true)));
  EXPECT_FALSE(Arg(1).same(Arg(1.0)));
  EXPECT_TRUE(Arg::tup(1, 2).py_eq(Arg::tup(1.0, true) ) == false);
  EXPECT_TRUE(Arg::tup(1, 1).py_eq(Arg::tup(1.0, true)));
  EXPECT_EQ(Arg::tup(0, AxisType::LOOP).repr(), "(0, AxisType.LOOP)");
  EXPECT_EQ(Arg(std::string("it's")).repr(), "\"it's\"");
  EXPECT_EQ(Arg(1e-5).repr(), "1e-05");
  EXPECT_EQ(Arg(0.1f * 1.0).repr().substr(0, 6), "0.1000");
}

TEST(UOpCore, PythonIntegerSemantics) {
  // floor division and modulo like python, truncating cdiv/cmod like C
  EXPECT_EQ(floordiv(-7, 2), -4);
  EXPECT_EQ(floormod(-7, 2), 1);
  EXPECT_EQ(cdiv(-7, 2), -3);
  EXPECT_EQ(cmod(-7, 2), -1);
  // int64 products do not overflow silently: bounds are python ints (saturating far beyond int64)
  UOp big = UOp::variable("big", 0, PyConst((pyint)INT64_MAX)) * UOp::variable("big2", 0, PyConst((pyint)INT64_MAX));
  EXPECT_EQ(big.vmax().as_int(), (pyint)INT64_MAX * (pyint)INT64_MAX);
  // exec_alu truncates to the dtype like the reference
  std::vector<PyConst> ops{PyConst(200), PyConst(100)};
  EXPECT_EQ(exec_alu(Ops::ADD, dtypes::uint8, ops), PyConst(44));
  EXPECT_EQ(exec_alu(Ops::ADD, dtypes::int8, ops), PyConst(44));
  std::vector<PyConst> f{PyConst(1.0), PyConst(3.0)};
  EXPECT_EQ(exec_alu(Ops::FLOORDIV, dtypes::float32, f), PyConst(0.0));
}

TEST(UOpCore, Spec2ChecksEveryNewNode) {
  UOp a = UOp::variable("spec_a", 0, 10, dtypes::int32);
  {
    Context c({{"SPEC", 2}});
    // an explicit dtype that disagrees with the derived one
    EXPECT_THROW(UOp(Ops::ADD, dtypes::float32, {a, a}), Error);
    // a node the spec rejects: an ALU whose srcs do not have its dtype
    UOp f = UOp::variable("spec_f", 0, 10, dtypes::float32);
    EXPECT_THROW(UOp(Ops::MUL, dtypes::int32, {a, f}, Arg(), Arg(7)), Error);
    // ordinary building is fine
    EXPECT_NO_THROW(graph_rewrite(((a + 3) * 2).floordiv(UOp::const_(PyConst(2), dtypes::int32)), sym()));
  }
  // with SPEC off nothing is checked
  EXPECT_NO_THROW(UOp(Ops::MUL, dtypes::int32, {a, UOp::variable("spec_f", 0, 10, dtypes::float32)}, Arg(), Arg(8)));
}

TEST(UOpCore, TypeVerifyNamesTheFailingNode) {
  UOp a = UOp::variable("tv", 0, 10, dtypes::int32);
  UOp bad(Ops::MUL, dtypes::int32, {a, UOp::variable("tvf", 0, 1, dtypes::float32)});
  try {
    type_verify(UOp::sink({bad}), spec_tensor());
    FAIL() << "expected SpecError";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("UOp verification failed at"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("Ops.MUL"), std::string::npos);
  }
}

// a ToposortMemo answers toposort_borrowed of its last root from the list it kept (the same nodes in the same
// order), walks for another root, holds its last root alive until it ends, and nests
TEST(UOpCore, ToposortMemoAnswersItsLastRootAndHoldsIt) {
  UOp a = UOp::variable("memo_a", 0, 10), b = UOp::variable("memo_b", 0, 10);
  UOp x = (a + b) * a, y = x + b;
  const std::vector<UOp> tx = x.toposort(), ty = y.toposort();
  auto same = [](const NodeList& l, const std::vector<UOp>& want) {
    if (l.size() != want.size()) return false;
    for (size_t i = 0; i < want.size(); i++)
      if (!(l[i] == want[i])) return false;
    return true;
  };
  {
    ToposortMemo memo;
    EXPECT_TRUE(same(x.toposort_borrowed(), tx));
    EXPECT_TRUE(same(x.toposort_borrowed(), tx));  // from the memo
    EXPECT_TRUE(same(y.toposort_borrowed(), ty));  // another root: walked, and now the memo's
    {
      ToposortMemo inner;  // the innermost answers, the outer keeps y
      EXPECT_TRUE(same(x.toposort_borrowed(), tx));
    }
    EXPECT_TRUE(same(y.toposort_borrowed(), ty));
  }
  // a graph whose only holder is the memo stays alive until the memo ends, and then goes
  const size_t before = live_uop_count();
  {
    ToposortMemo memo;
    {
      UOp z = (UOp::variable("memo_z", 0, 10) * 3 + 7) * 5;
      EXPECT_EQ(z.toposort_borrowed().size(), z.toposort().size());
    }
    EXPECT_GT(live_uop_count(), before);
  }
  EXPECT_EQ(live_uop_count(), before);
  // without a memo nothing is kept
  EXPECT_TRUE(same(x.toposort_borrowed(), tx));
}

// A node's cache (bounds, shape, ...) comes from a per-thread pool of freed caches: a node made where another died
// starts with nothing computed, on this thread and on one that frees caches made elsewhere
TEST(UOpCore, PooledCachesStartEmpty) {
  auto check_round = [](int round) {
    for (int i = 0; i < 200; i++) {
      const pyint hi = 10 + i + 1000 * round;
      UOp v = UOp::variable("pool_v", 0, hi);
      UOp e = v * 2 + i;  // bounds [i, 2*hi + i], cached on each node
      EXPECT_EQ(e.vmin(), PyConst((pyint)i));
      EXPECT_EQ(e.vmax(), PyConst(2 * hi + i));
      EXPECT_TRUE(e.shape_opt() && e.shape_opt()->empty());
    }
  };
  check_round(0);
  check_round(1);  // the caches freed by round 0 come back from the pool
  // caches made here and freed by another thread, whose later caches come from what it freed
  std::vector<UOp> made;
  for (int i = 0; i < 100; i++) {
    made.push_back(UOp::variable("pool_w", 0, 50 + i) * 3);
    (void)made.back().vmax();
  }
  std::thread t([&] {
    made.clear();
    check_round(2);
  });
  t.join();
  check_round(3);
}
