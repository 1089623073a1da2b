// tg::Function (function.py's @function on Tensors): the body becomes one FUNCTION call whose outputs give the values
// of calling the body directly, gradients flow through it like through the inlined body, implicit buffers are an
// error unless allowed.
#include <gtest/gtest.h>

#include "lib/tensor/function.h"
#include "tests/support/devices.h"

using namespace tg;

namespace {
Tensor mat(std::vector<float> v, int64_t r, int64_t c) {
  return Tensor::from_vector<float>(v).reshape({r, c}).realize();
}
std::vector<Tensor> body(const std::vector<Tensor>& a) {
  Tensor h = (a[0].matmul(a[1]) + 1).relu();
  return {h.sum(1), h.max()};
}
void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}
}  // namespace

TEST(TensorFunction, OutputsEqualTheBodyCalledDirectly) {
  Tensor a = mat({1, -2, 3, 0.5, -1, 2}, 2, 3), b = mat({0.5, -1, 2, 1, -0.25, 3}, 3, 2);
  Function f(body, {.name = "mlp"});
  auto out = f({a, b});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].uop().op(), Ops::GETTUPLE);
  EXPECT_EQ(out[0].uop().src(0).op(), Ops::FUNCTION);
  auto want = body({a, b});
  expect_near(out[0].to_vector<float>(), want[0].to_vector<float>());
  expect_near(out[1].to_vector<float>(), want[1].to_vector<float>());
  // a second call on other data reuses the same body
  Tensor a2 = mat({0, 1, 2, 3, 4, 5}, 2, 3);
  auto out2 = f({a2, b});
  EXPECT_TRUE(out2[0].uop().src(0).src(0) == out[0].uop().src(0).src(0)) << "same FUNCTION body";
  expect_near(out2[0].to_vector<float>(), body({a2, b})[0].to_vector<float>());
}

TEST(TensorFunction, GradientsFlowThroughTheCall) {
  Tensor a = mat({1, -2, 3, 0.5, -1, 2}, 2, 3), b = mat({0.5, -1, 2, 1, -0.25, 3}, 3, 2);
  Function f(body);
  Tensor loss = f({a, b})[0].sum();
  auto g = loss.gradient({a, b});
  Tensor loss_direct = body({a, b})[0].sum();
  auto gd = loss_direct.gradient({a, b});
  expect_near(g[0].to_vector<float>(), gd[0].to_vector<float>());
  expect_near(g[1].to_vector<float>(), gd[1].to_vector<float>());
}

TEST(TensorFunction, ImplicitBuffersAreAnErrorUnlessAllowed) {
  Tensor w = mat({1, 2, 3, 4}, 2, 2);
  Tensor x = mat({1, 1, 2, 2}, 2, 2);
  auto uses_w = [&](const std::vector<Tensor>& a) { return std::vector<Tensor>{a[0] * w}; };
  try {
    Function(uses_w, {.name = "scale"})({x});
    FAIL() << "w is an implicit input";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("function scale has 1 implicit buffer(s), but allow_implicit=False"),
              std::string::npos)
        << e.what();
  }
  auto out = Function(uses_w, {.name = "scale", .allow_implicit = true})({x});
  expect_near(out[0].to_vector<float>(), {1, 2, 6, 8});
  EXPECT_THROW(Function([](const std::vector<Tensor>&) { return std::vector<Tensor>{}; })({x}), Error);
}
