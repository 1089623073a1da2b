// lower_and_compile runs codegen on PARALLEL worker threads (engine/realize.py's worker pool, as threads): codegen of
// the same AST must give the same PROGRAM whichever thread runs it and whatever runs beside it. Every golden kernel
// AST is lowered on one thread, then on four threads at once in different orders; the PROGRAMs (hash-consed, so
// equality is identity of the whole graph incl. the rendered source) must be equal. Then a tensor program compiled
// with PARALLEL=2 gives the values of PARALLEL=0, and the lowering reports the CPU and wall time of its two phases.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <thread>
#include <unordered_map>

#include "lib/codegen/codegen.h"
#include "lib/codegen/late/program.h"
#include "lib/engine/counters.h"
#include "lib/renderer/llvmir.h"
#include "lib/tensor.h"
#include "tests/support/codegen_goldens.h"
#include "tests/support/devices.h"

using namespace tg;

// the golden kernels' ASTs (those without a tag), and their programs lowered on this thread
struct GoldenPrograms {
  CPULLVMRenderer ren{Target{"CPU", "LLVM", "x86_64,native", "", ""}};
  std::vector<UOp> asts, want;
  GoldenPrograms() {
    ren.global_max = std::vector<pyint>{8, 0, 0};
    for (const CgKernel& k : load_codegen_goldens(TG_TEST_DATA "/codegen_goldens.txt"))
      if (k.ast && k.ast.tag().is_none()) asts.push_back(k.ast);
    for (const UOp& a : asts) want.push_back(to_program(a, ren));
  }
};
// lower(ast) of every AST on nthreads threads at once, each in its own shuffled order: got[thread][kernel]
template <typename Lower>
static std::vector<std::vector<UOp>> lower_on_threads(const std::vector<UOp>& asts, int nthreads, int round,
                                                      Lower lower) {
  std::vector<std::vector<UOp>> got((size_t)nthreads, std::vector<UOp>(asts.size()));
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; t++)
    threads.emplace_back([&, t] {
      std::vector<size_t> order(asts.size());
      for (size_t i = 0; i < order.size(); i++) order[i] = i;
      std::shuffle(order.begin(), order.end(), std::mt19937(round * 10 + t));
      for (size_t i : order) got[(size_t)t][i] = lower(asts[i]);
    });
  for (auto& th : threads) th.join();
  return got;
}

TEST(ParallelCodegen, ProgramsDoNotDependOnTheThread) {
  GoldenPrograms g;
  auto& [ren, asts, want] = g;
  ASSERT_GE(asts.size(), 80u);
  for (int round = 0; round < 2; round++) {
    auto got = lower_on_threads(asts, 4, round, [&](const UOp& a) { return to_program(a, ren); });
    for (int t = 0; t < 4; t++)
      for (size_t i = 0; i < asts.size(); i++)
        EXPECT_TRUE(got[t][i] == want[i]) << "thread " << t << " kernel " << i << ":\n"
                                          << got[t][i].src(2).arg().as_str() << "\nwant\n"
                                          << want[i].src(2).arg().as_str();
  }
}

// a and b are the same graph node for node (op, dtype, arg, tag and srcs), whichever nodes hold them
static bool same_graph(const UOp& a, const UOp& b, std::unordered_map<const void*, const void*>& memo) {
  auto it = memo.find(a.node());
  if (it != memo.end()) return it->second == b.node();
  // a PROGRAM's ProgramInfo holds UOps (Variables, symbolic sizes), equal by identity: compared by their repr
  const bool same_arg = a.arg().same(b.arg()) || (a.op() == Ops::PROGRAM && a.arg().repr() == b.arg().repr());
  if (a.op() != b.op() || a.dtype() != b.dtype() || !same_arg || !a.tag().same(b.tag()) || a.nsrc() != b.nsrc())
    return false;
  for (size_t i = 0; i < a.nsrc(); i++)
    if (!same_graph(a.src(i), b.src(i), memo)) return false;
  memo.emplace(a.node(), b.node());
  return true;
}

// A lowering on several workers runs each one's codegen on its private nodes (PrivateNodes): the AST copied into
// the thread's own intern table, the PROGRAM handed out as nodes in no table. It must be the program of the shared
// codegen node for node, rendered source included, from two threads at once; and every node it made must be freed
// once the programs are dropped, the threads' small constants excepted.
TEST(ParallelCodegen, PrivateNodesGiveTheSamePrograms) {
  GoldenPrograms g;
  auto& [ren, asts, want] = g;
  ASSERT_GE(asts.size(), 80u);
  size_t symbolic = 0;
  for (const UOp& w : want) symbolic += !w.arg().as<ProgramInfo>()->vars.empty();
  EXPECT_GE(symbolic, 1u) << "no kernel with a Variable: the UOps in ProgramInfo are not exercised";
  for (int round = 0; round < 2; round++) {
    const size_t live_before = live_uop_count();
    {
      auto got = lower_on_threads(asts, 2, round, [&](const UOp& a) { return to_program_private(a, ren); });
      for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < asts.size(); i++) {
          std::unordered_map<const void*, const void*> memo;
          ASSERT_TRUE(same_graph(got[t][i], want[i], memo)) << "thread " << t << " kernel " << i << ":\n"
                                                            << got[t][i].src(2).arg().as_str() << "\nwant\n"
                                                            << want[i].src(2).arg().as_str();
          // the handed-out program lives on: the shared side builds on it (a CALL of it) and takes it apart
          UOp call = UOp(Ops::CALL, dtypes::void_, {got[t][i]}, Arg());
          EXPECT_EQ(call.src(0).src(2).arg().as_str(), want[i].src(2).arg().as_str());
        }
    }
    // the first round made the threads' small constants (kept for good, not counted live)
    EXPECT_EQ(live_uop_count(), live_before) << "round " << round;
  }
  // a codegen that throws leaves no private node behind
  const size_t live_before = live_uop_count();
  UOp not_a_kernel = asts[0].src(0);
  EXPECT_THROW(to_program_private(not_a_kernel, ren), Error);
  EXPECT_EQ(live_uop_count(), live_before);
  // not in a scope, or nested: an error, not a crash
  EXPECT_THROW(import_private(asts[0]), Error);
  PrivateNodes scope;
  EXPECT_THROW(PrivateNodes(), Error);
}

TEST(ParallelCodegen, TensorProgramCompiledInParallelGivesTheSameValues) {
  auto run = [](int64_t parallel, float shift) {
    Context c({{"PARALLEL", parallel}});
    Tensor x = Tensor::arange(0, 96).reshape({8, 12}).cast(dtypes::float32) * 0.01f + shift;
    Tensor w = Tensor::arange(0, 60).reshape({12, 5}).cast(dtypes::float32) * 0.05f - 1.2f;
    Tensor y = (x.matmul(w).relu() + x.sum(1, true)).softmax(1);
    Tensor z = x.max(0).exp() * x.mean();
    return std::make_pair(y.to_vector<float>(), z.to_vector<float>());
  };
  // different constants, so the PARALLEL=2 run compiles its own kernels instead of reusing the first run's
  auto a = run(0, 0.5f), b = run(2, 0.25f), a2 = run(0, 0.25f);
  ASSERT_EQ(b.first.size(), a2.first.size());
  for (size_t i = 0; i < b.first.size(); i++) EXPECT_FLOAT_EQ(b.first[i], a2.first[i]) << i;
  for (size_t i = 0; i < b.second.size(); i++) EXPECT_FLOAT_EQ(b.second[i], a2.second[i]) << i;
  EXPECT_NE(a.second, a2.second);
  float lo = *std::min_element(b.first.begin(), b.first.end()), hi = *std::max_element(b.first.begin(), b.first.end());
  EXPECT_LT(lo + 0.05f, hi) << "the softmax is not uniform";
}

// lower_and_compile generates every new kernel, then compiles them, each phase on the PARALLEL threads: the counters
// hold each phase's wall time and the thread count, next to the CPU seconds the threads spent
TEST(ParallelCodegen, LoweringReportsWallTimeOfCodegenAndCompile) {
  for (int64_t parallel : {0, 2}) {
    Context c({{"PARALLEL", parallel}});
    CompileCounters::reset();
    // shapes no other test uses (a new one per round): new kernels, so both phases run
    const int64_t rows = 7 + parallel, cols = 11 + parallel;
    std::vector<float> data((size_t)(rows * cols));
    for (size_t i = 0; i < data.size(); i++) data[i] = (float)i * 0.013f;
    Tensor x = Tensor::from_vector(data).reshape({rows, cols});
    Tensor y = (x.matmul(x.transpose()).relu() + 3.5f).log_softmax(1).sum(0);
    std::vector<float> v = y.to_vector<float>();
    ASSERT_EQ(v.size(), (size_t)rows);
    EXPECT_GE(CompileCounters::programs.load(), 2) << "PARALLEL=" << parallel;
    EXPECT_GT(CompileCounters::codegen_s.load(), 0.0);
    EXPECT_GT(CompileCounters::codegen_wall_s.load(), 0.0);
    EXPECT_GT(CompileCounters::compile_wall_s.load(), 0.0);
    EXPECT_EQ(CompileCounters::threads.load(), parallel == 0 ? 1 : 2) << "PARALLEL=" << parallel;
  }
}
