// lower_and_compile runs codegen on PARALLEL worker threads (engine/realize.py's worker pool, as threads): codegen of
// the same AST must give the same PROGRAM whichever thread runs it and whatever runs beside it. Every golden kernel
// AST is lowered on one thread, then on four threads at once in different orders; the PROGRAMs (hash-consed, so
// equality is identity of the whole graph incl. the rendered source) must be equal. Then a tensor program compiled
// with PARALLEL=2 gives the values of PARALLEL=0.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <thread>

#include "lib/codegen/codegen.h"
#include "lib/renderer/llvmir.h"
#include "lib/tensor.h"
#include "tests/devices.h"
#include "tests/parity/codegen_goldens.h"

using namespace tg;

TEST(ParallelCodegen, ProgramsDoNotDependOnTheThread) {
  CPULLVMRenderer ren(Target{"CPU", "LLVM", "x86_64,native", "", ""});
  ren.global_max = std::vector<pyint>{8, 0, 0};
  auto kernels = load_codegen_goldens(TG_TEST_DATA "/codegen_goldens.txt");
  std::vector<UOp> asts;
  for (const CgKernel& k : kernels)
    if (k.ast && k.ast.tag().is_none()) asts.push_back(k.ast);
  ASSERT_GE(asts.size(), 80u);
  std::vector<UOp> want;
  for (const UOp& a : asts) want.push_back(to_program(a, ren));
  for (int round = 0; round < 2; round++) {
    std::vector<std::vector<UOp>> got(4, std::vector<UOp>(asts.size()));
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++)
      threads.emplace_back([&, t] {
        std::vector<size_t> order(asts.size());
        for (size_t i = 0; i < order.size(); i++) order[i] = i;
        std::shuffle(order.begin(), order.end(), std::mt19937(round * 10 + t));
        for (size_t i : order) got[t][i] = to_program(asts[i], ren);
      });
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; t++)
      for (size_t i = 0; i < asts.size(); i++)
        EXPECT_TRUE(got[t][i] == want[i]) << "thread " << t << " kernel " << i << ":\n"
                                          << got[t][i].src(2).arg().as_str() << "\nwant\n"
                                          << want[i].src(2).arg().as_str();
  }
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
