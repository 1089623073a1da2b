// TinyJit (engine/jit.py): the function runs on the first call, is captured on the second and replayed afterwards on
// the new inputs' data without running the function again; wrong inputs are JitErrors naming the input.
#include <gtest/gtest.h>

#include "lib/engine/jit.h"
#include "tests/support/devices.h"

using namespace tg;

namespace {

Tensor vec(std::vector<float> v) { return Tensor::from_vector<float>(v).realize(); }

}  // namespace

TEST(TinyJit, CapturesOnTheSecondCallAndReplaysWithNewData) {
  int calls = 0;
  Tensor w = vec({1, 2, 3});
  TinyJit jit([&](const std::vector<Tensor>& in) {
    calls++;
    Tensor y = (in[0] * w + 1).relu();
    return std::vector<Tensor>{y, y.sum()};
  });
  for (int i = 0; i < 5; i++) {
    float s = float(i) - 2;
    auto out = jit({vec({s, 2 * s, -s})});
    std::vector<float> want = {std::max(0.f, s * 1 + 1), std::max(0.f, 2 * s * 2 + 1), std::max(0.f, -s * 3 + 1)};
    EXPECT_EQ(out[0].to_vector<float>(), want) << "call " << i;
    EXPECT_FLOAT_EQ(out[1].item<float>(), want[0] + want[1] + want[2]) << "call " << i;
  }
  EXPECT_EQ(calls, 2);  // run once, captured once, then replayed
  EXPECT_EQ(jit.cnt(), 5);
  EXPECT_GE(jit.captured_calls(), 1u);
}

TEST(TinyJit, StatefulAssignInsideTheJit) {
  Tensor acc = Tensor::zeros({2}).contiguous().realize();
  TinyJit jit([&](const std::vector<Tensor>& in) {
    acc.assign(acc + in[0]);
    return std::vector<Tensor>{acc};
  });
  for (int i = 1; i <= 4; i++) jit({vec({float(i), 1})});
  EXPECT_EQ(acc.to_vector<float>(), (std::vector<float>{10, 4}));
}

TEST(TinyJit, InputsThatDoNotMatchAreErrorsNamingTheInput) {
  TinyJit jit([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2}; });
  jit({vec({1, 2, 3})});
  jit({vec({1, 2, 3})});
  try {
    jit({vec({1, 2, 3, 4})});
    FAIL() << "a different shape must not replay";
  } catch (const JitError& e) {
    EXPECT_NE(std::string(e.what()).find("input 0: shape (3,) != (4,)"), std::string::npos) << e.what();
  }
  try {
    jit({Tensor::from_vector<int32_t>({1, 2, 3}).realize()});
    FAIL() << "a different dtype must not replay";
  } catch (const JitError& e) {
    EXPECT_NE(std::string(e.what()).find("dtype"), std::string::npos) << e.what();
  }
  try {
    jit({vec({1, 2, 3}), vec({1, 2, 3})});
    FAIL();
  } catch (const JitError& e) {
    EXPECT_NE(std::string(e.what()).find("captured with 1"), std::string::npos) << e.what();
  }
}

TEST(TinyJit, ConstantAndDuplicateInputsAreRefused) {
  TinyJit jit([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1}; });
  EXPECT_THROW(jit({Tensor(3.0)}), JitError);
  Tensor a = vec({1, 2});
  TinyJit two([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + in[1]}; });
  EXPECT_THROW(two({a, a}), JitError);
}

TEST(TinyJit, NothingToCaptureIsAnError) {
  TinyJit jit([](const std::vector<Tensor>& in) { return std::vector<Tensor>{}; });
  jit({vec({1})});
  EXPECT_THROW(jit({vec({1})}), JitError);
}

TEST(TinyJit, JitZeroRunsTheFunctionEveryTime) {
  Context c({{"JIT", 0}});
  int calls = 0;
  TinyJit jit([&](const std::vector<Tensor>& in) {
    calls++;
    return std::vector<Tensor>{in[0] + 1};
  });
  for (int i = 0; i < 3; i++) EXPECT_EQ(jit({vec({float(i)})})[0].item<float>(), float(i) + 1);
  EXPECT_EQ(calls, 3);
}
