// Training mode, dropout, detach and the requires_grad opt-out. Dropout values and gradients are the
// reference's (tests/parity/gen_train_goldens.py -> train_goldens.txt).
#include <gtest/gtest.h>

#include <cmath>

#include "lib/nn/nn.h"
#include "lib/tensor.h"
#include "tests/support/devices.h"
#include "tests/support/golden_file.h"

using namespace tg;

namespace {


struct DropoutGolden {
  std::string name;
  int64_t seed = 0;
  double p = 0;
  DType dtype;
  Shape shape;
  std::vector<double> y, grad;
};

std::vector<DropoutGolden> load_goldens() {
  test::GoldenFile f(std::string(TG_TEST_DATA) + "/train_goldens.txt");
  std::vector<DropoutGolden> out;
  while (f.next()) {
    std::vector<std::string> w = f.words();
    if (f.is("dropout") || f.is("dropout_twice")) {  // dropout <name> | dropout_twice, then <seed> <p> <dtype> <shape...>
      size_t i = f.is("dropout") ? 2 : 1;
      if (w.size() < i + 3) f.fail("expected: <seed> <p> <dtype> <shape...>");
      DropoutGolden g;
      g.name = f.is("dropout") ? w[1] : f.key();
      g.seed = std::stoll(w[i]);
      g.p = std::stod(w[i + 1]);
      g.dtype = w[i + 2] == "double" ? dtypes::float64 : dtypes::float32;
      for (size_t k = i + 3; k < w.size(); k++) g.shape.push_back(sint((pyint)std::stoll(w[k])));
      out.push_back(g);
    } else if (f.is("y")) {
      out.back().y = f.numbers(1);
    } else if (f.is("grad")) {
      out.back().grad = f.numbers(1);
    }
  }
  return out;
}

// the reference's input: Tensor([(i + 1) / n for i in range(n)], dtype).reshape(shape), realized
Tensor golden_input(const DropoutGolden& g) {
  int64_t n = 1;
  for (const sint& s : g.shape) n *= s.i();
  std::vector<double> v;
  for (int64_t i = 0; i < n; i++) v.push_back((double)(i + 1) / (double)n);
  return Tensor::from_vector(v, g.dtype).reshape(g.shape).realize();
}

void expect_values(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++)
    EXPECT_NEAR(got[i], want[i], 1e-6 * std::max(1.0, std::abs(want[i]))) << what << " [" << i << "]";
}

}  // namespace

TEST(Train, GuardSetsAndRestoresTraining) {
  int64_t before = TRAINING.value();
  {
    auto g = Tensor::train();
    EXPECT_TRUE(Tensor::training());
    EXPECT_EQ(TRAINING.value(), 1);
    {
      auto off = Tensor::train(false);
      EXPECT_FALSE(Tensor::training());
    }
    EXPECT_TRUE(Tensor::training());
  }
  EXPECT_EQ(TRAINING.value(), before);
  {
    Context c({{"TRAINING", 1}});  // the reference's way sets the same variable
    EXPECT_TRUE(Tensor::training());
  }
}

TEST(Train, DropoutMatchesReferenceUnderTrain) {
  std::vector<DropoutGolden> goldens = load_goldens();
  ASSERT_EQ(goldens.size(), 5u);
  for (const DropoutGolden& g : goldens) {
    Tensor::manual_seed(g.seed);
    Tensor a = golden_input(g);
    if (g.name == "dropout_twice") {
      auto t = Tensor::train();
      Tensor y1 = a.dropout(g.p), y2 = a.dropout(g.p);
      expect_values(y1.cat({y2}).cast(dtypes::float64).to_vector<double>(), g.y, g.name + " y");
      continue;
    }
    Tensor y;
    {
      auto t = Tensor::train();
      y = a.dropout(g.p);
      (y * y).sum().backward();
    }
    EXPECT_EQ(y.dtype(), g.dtype) << g.name;
    expect_values(y.cast(dtypes::float64).to_vector<double>(), g.y, g.name + " y");
    ASSERT_TRUE(a.grad().has_value()) << g.name;
    expect_values(a.grad()->cast(dtypes::float64).to_vector<double>(), g.grad, g.name + " grad");
  }
}

TEST(Train, DropoutIsIdentityOutsideTrainingAndChecksP) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4}).realize();
  {
    auto off = Tensor::train(false);
    EXPECT_TRUE(a.dropout(0.5).is(a));  // returns self, like the reference
  }
  auto t = Tensor::train();
  EXPECT_TRUE(a.dropout(0.0).is(a));
  EXPECT_EQ(a.dropout(1.0).to_vector<float>(), (std::vector<float>{0, 0, 0, 0}));
  try {
    (void)a.dropout(1.5);
    FAIL() << "dropout(1.5) must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("p=1.5 is out of range [0, 1]"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)a.dropout(-0.1), Error);
}

TEST(Train, BatchNormFollowsTrain) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}).reshape({2, 2, 2}).realize();
  nn::BatchNorm bn(2);
  {
    auto off = Tensor::train(false);
    // eval: running statistics (0 mean, 1 var): y = x / sqrt(1 + eps)
    std::vector<float> y = bn(x).to_vector<float>();
    EXPECT_NEAR(y[7], 8 / std::sqrt(1 + 1e-5), 1e-5);
    EXPECT_EQ(bn.running_mean->to_vector<float>(), (std::vector<float>{0, 0}));
  }
  {
    auto t = Tensor::train();
    Tensor y = bn(x);
    // training: batch statistics (channel 0 holds 1, 2, 5, 6: mean 3.5), running stats move by momentum 0.1
    std::vector<float> yv = y.to_vector<float>();
    EXPECT_NEAR(yv[0] + yv[1] + yv[4] + yv[5], 0, 1e-5);
    std::vector<float> rm = bn.running_mean->to_vector<float>();
    EXPECT_NEAR(rm[0], 0.35f, 1e-6);
    EXPECT_NEAR(rm[1], 0.55f, 1e-6);
    EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
  }
}

TEST(Autograd, DetachBlocksGradients) {
  Tensor x = Tensor::from_vector<double>({1, -2, 3}).realize();
  // d/dx (x * detach(x)) = detach(x), not 2x
  Tensor y = (x * x.detach()).sum();
  EXPECT_EQ(y.gradient({x})[0].to_vector<double>(), (std::vector<double>{1, -2, 3}));
  // a target reached only through detach gets a zero gradient
  EXPECT_EQ((x.detach() * 3).sum().gradient({x})[0].to_vector<double>(), (std::vector<double>{0, 0, 0}));
  y.backward();
  EXPECT_EQ(x.grad()->to_vector<double>(), (std::vector<double>{1, -2, 3}));
}

TEST(Autograd, RequiresGradOptOut) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3}).realize();
  Tensor b = Tensor::from_vector<float>({4, 5, 6}).realize();
  EXPECT_TRUE(a.requires_grad());
  EXPECT_FALSE(Tensor::from_vector<int32_t>({1, 2}).requires_grad());  // only float tensors have gradients
  b.requires_grad_(false);
  EXPECT_FALSE(b.requires_grad());
  Tensor loss = (a * b).sum();
  loss.backward();
  ASSERT_TRUE(a.grad().has_value());
  EXPECT_EQ(a.grad()->to_vector<float>(), (std::vector<float>{4, 5, 6}));
  EXPECT_FALSE(b.grad().has_value());
  try {
    (void)(a * b).sum().gradient({a, b});
    FAIL() << "gradient w.r.t. a requires_grad=false tensor must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("target 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("requires_grad=false"), std::string::npos) << e.what();
  }
  // opting back in
  b.requires_grad_(true);
  (a * b).sum().backward();
  EXPECT_EQ(b.grad()->to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(a.grad()->to_vector<float>(), (std::vector<float>{8, 10, 12}));  // accumulated like the reference
}

TEST(Autograd, GradientFlowsThroughOptedOutIntermediate) {
  Tensor a = Tensor::from_vector<float>({1, 2}).realize();
  Tensor c = a * 2;
  c.requires_grad_(false);
  (c * 3).sum().backward();
  EXPECT_FALSE(c.grad().has_value());
  ASSERT_TRUE(a.grad().has_value());
  EXPECT_EQ(a.grad()->to_vector<float>(), (std::vector<float>{6, 6}));
}
