// tg::nn optimizers against the reference (tests/data/optim_goldens.txt, gen_optim_goldens.py): three steps of SGD
// (plain, momentum+nesterov+weight decay, classic momentum), Adam, AdamW, LAMB, LARS and Muon on a small problem give
// the reference's loss, weights and biases after every step (1e-5). Gradients come from tg::gradient, what
// Tensor.backward computes.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "lib/mixin/gradient.h"
#include "lib/nn/nn.h"
#include "lib/nn/optim.h"
#include "tests/support/devices.h"
#include "tests/support/golden_file.h"

using namespace tg;

namespace {

struct Step {
  double loss = 0;
  std::vector<double> w, b;
};
std::map<std::string, std::vector<Step>> load() {
  test::GoldenFile f(TG_TEST_DATA "/optim_goldens.txt");
  std::map<std::string, std::vector<Step>> out;
  std::string cur;
  while (f.next()) {
    std::vector<std::string> w = f.words();
    if (f.is("case")) {
      cur = w.at(1);
    } else if (f.is("step")) {  // step <n> <loss>
      out[cur].push_back({std::stod(w.at(2)), {}, {}});
    } else if (f.is("w")) {
      out[cur].back().w = f.numbers(1);
    } else if (f.is("b")) {
      out[cur].back().b = f.numbers(1);
    }
  }
  return out;
}

Tensor inp(const Shape& shape) {
  pyint n = 1;
  for (const sint& s : shape) n *= s.i();
  return ((Tensor::arange(PyConst(n)).float_().reshape(shape) / (double)n - 0.5).sin() * 2);
}

void near(const std::vector<float>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-5 * std::max(1.0, std::abs(want[i]))) << what << "[" << i << "]";
}

using Make = std::function<std::shared_ptr<nn::Optimizer>(std::vector<Tensor>)>;
const std::map<std::string, Make>& table() {
  static const std::map<std::string, Make> t = {
      {"sgd", [](std::vector<Tensor> p) { return nn::SGD(p, 0.1); }},
      {"sgd_momentum_nesterov_wd", [](std::vector<Tensor> p) { return nn::SGD(p, 0.05, 0.9, 0.01, true); }},
      {"sgd_classic_momentum", [](std::vector<Tensor> p) { return nn::SGD(p, 0.05, 0.8, 0.0, false, true); }},
      {"adam", [](std::vector<Tensor> p) { return nn::Adam(p, 0.01); }},
      {"adamw", [](std::vector<Tensor> p) { return nn::AdamW(p, 0.01, 0.9, 0.999, 1e-8, 0.1); }},
      {"lamb", [](std::vector<Tensor> p) { return std::make_shared<nn::LAMB>(p, 0.01, 0.9, 0.999, 1e-6, 0.05); }},
      {"lars", [](std::vector<Tensor> p) { return std::make_shared<nn::LARS>(p, 0.1); }},
      {"muon", [](std::vector<Tensor> p) { return nn::Muon(p, 0.02); }},
  };
  return t;
}

}  // namespace

void run_goldens(bool with_backward) {
  auto goldens = load();
  ASSERT_EQ(goldens.size(), table().size());
  Tensor x = inp({5, 3}), y = inp({5, 4}) * 0.5;
  for (const auto& [name, steps] : goldens) {
    SCOPED_TRACE(name);
    auto it = table().find(name);
    ASSERT_NE(it, table().end());
    Tensor::manual_seed(1337);
    Tensor w = Tensor::uniform({3, 4}, -1.0, 1.0), b = Tensor::uniform({4}, -0.5, 0.5);
    Context c({{"TRAINING", 1}});
    auto opt = it->second({w, b});
    for (size_t s = 0; s < steps.size(); s++) {
      Tensor loss = ((x.matmul(w) + b).relu() - y).square().mean();
      if (with_backward) {  // the reference's loop: zero_grad, backward, step
        opt->zero_grad();
        loss.backward();
        opt->step();
      } else {
        std::vector<UOp> g = gradient(loss.uop(), {w.uop(), b.uop()});
        opt->step({Tensor::wrap(g[0]), Tensor::wrap(g[1])});
      }
      EXPECT_NEAR(loss.item<float>(), steps[s].loss, 1e-5) << "step " << s;
      near(w.to_vector<float>(), steps[s].w, "w step " + std::to_string(s));
      near(b.to_vector<float>(), steps[s].b, "b step " + std::to_string(s));
    }
  }
}

TEST(OptimGoldens, ThreeStepsOfEveryOptimizerMatchTheReference) { run_goldens(false); }
TEST(OptimGoldens, SameWithBackwardAndGrad) { run_goldens(true); }

TEST(Autograd, BackwardAccumulatesAndZeroGradClears) {
  Tensor w = Tensor::from_vector<float>({1, 2, 3}).realize();
  Tensor c = Tensor::from_vector<int32_t>({1, 1, 1}).realize();  // not float: no .grad
  (w * w).sum().backward();
  ASSERT_TRUE(w.grad());
  EXPECT_EQ(w.grad()->to_vector<float>(), (std::vector<float>{2, 4, 6}));
  (w * 3).sum().backward();  // accumulates into the existing .grad
  EXPECT_EQ(w.grad()->to_vector<float>(), (std::vector<float>{5, 7, 9}));
  (w.sum() + c.sum().float_()).backward();
  EXPECT_FALSE(c.grad());
  auto opt = nn::SGD({w}, 0.1);
  opt->zero_grad();
  EXPECT_FALSE(w.grad());
  Context t({{"TRAINING", 1}});
  EXPECT_THROW(opt->step(), Error);  // no gradient: the error names the param
  EXPECT_THROW((w * 2).backward(), Error);  // not a scalar and no gradient given
}

TEST(Optim, ErrorsNameTheProblem) {
  Tensor w = Tensor::ones({2, 2}).contiguous().realize();
  EXPECT_THROW(nn::SGD({w}, -1.0), Error);
  EXPECT_THROW(nn::SGD({}, 0.1), Error);
  EXPECT_THROW(nn::LARS({w}, 0.1, -0.5), Error);
  auto opt = nn::Adam({w});
  {
    Context c({{"TRAINING", 0}});
    try {
      opt->step({Tensor::ones({2, 2})});
      FAIL();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("TRAINING must be enabled"), std::string::npos) << e.what();
    }
  }
  Context c({{"TRAINING", 1}});
  EXPECT_THROW(opt->step({Tensor::ones({2, 3})}), Error);
  EXPECT_THROW(opt->step({}), Error);
}
