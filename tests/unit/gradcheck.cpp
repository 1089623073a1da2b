// Numerical gradient checks: for every op and nn layer training uses, the gradient from autograd (both
// Tensor::backward() and Tensor::gradient()) equals central finite differences of the forward, in float64.
//
// Each case is a function f of float64 input tensors. The checked scalar is L = sum(f(x) * W) with a fixed W of mixed
// signs, so every output element's gradient counts with its own weight. The finite differences evaluate L at x +- eps
// for every element of every input; all of them are realized together in a few realize calls, and since each
// evaluation reads its own freshly made buffers the kernels have the same ASTs and are compiled once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "lib/nn/nn.h"
#include "lib/tensor.h"
#include "tests/support/devices.h"

using namespace tg;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// how an input's values are drawn (away from the kinks and outside the domains where the op is not differentiable)
enum class Gen {
  Any,       // [-1, 1)
  Pos,       // [0.5, 2)
  Away,      // +-[0.2, 1): away from 0
  Distinct,  // spaced 0.07 apart across all Distinct inputs of the case (max/min/pool/clip without ties)
  Unit,      // [0.1, 0.9): probabilities
  GtOne,     // [1.2, 2.5)
  Tied2,     // Distinct values mirrored: element j == element n-1-j (ties broken by central differences give 1/2)
};

struct In {
  std::vector<int64_t> shape;
  Gen gen = Gen::Any;
};

struct GradCase {
  std::string name;
  std::vector<In> in;
  Fn f;
  double rtol = 1e-6, atol = 1e-7, eps = 1e-6;
  bool training = false;
  const char* dev = nullptr;      // the device (DEV) the case runs on, CPU by default
  DType dtype = dtypes::float64;  // of the inputs
};

// DEV=dev for a scope (the default device is read from DEV whenever a tensor is made)
struct ScopedDev {
  std::optional<std::string> old;
  bool set = false;
  explicit ScopedDev(const char* dev) {
    if (!dev) return;
    if (const char* o = getenv("DEV")) old = o;
    setenv("DEV", dev, 1), set = true;
  }
  ~ScopedDev() {
    if (!set) return;
    if (old)
      setenv("DEV", old->c_str(), 1);
    else
      unsetenv("DEV");
  }
};

std::ostream& operator<<(std::ostream& os, const GradCase& c) { return os << c.name; }

struct Lcg {
  uint64_t s;
  explicit Lcg(uint64_t seed) : s(seed * 6364136223846793005ULL + 1442695040888963407ULL) {}
  double next() {  // [0, 1)
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(s >> 11) / 9007199254740992.0;
  }
};

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t x : s) n *= x;
  return n;
}
Shape to_shape(const std::vector<int64_t>& s) {
  Shape r;
  for (int64_t x : s) r.push_back(sint((pyint)x));
  return r;
}

std::vector<std::vector<double>> gen_inputs(const GradCase& c) {
  Lcg rng(std::hash<std::string>{}(c.name));
  int64_t ndistinct = 0;
  for (const In& in : c.in)
    if (in.gen == Gen::Distinct) ndistinct += numel(in.shape);
  std::vector<int64_t> perm(ndistinct);
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t i = ndistinct - 1; i > 0; i--) std::swap(perm[i], perm[(int64_t)(rng.next() * (double)(i + 1))]);
  size_t di = 0;
  std::vector<std::vector<double>> out;
  for (const In& in : c.in) {
    std::vector<double> v;
    for (int64_t i = 0; i < numel(in.shape); i++) {
      double u = rng.next();
      switch (in.gen) {
        case Gen::Any:
          v.push_back(2 * u - 1);
          break;
        case Gen::Pos:
          v.push_back(0.5 + 1.5 * u);
          break;
        case Gen::Away:
          v.push_back((rng.next() < 0.5 ? -1 : 1) * (0.2 + 0.8 * u));
          break;
        case Gen::Distinct:
          v.push_back((double)(perm[di++] - ndistinct / 2) * 0.07 + 0.011);
          break;
        case Gen::Unit:
          v.push_back(0.1 + 0.8 * u);
          break;
        case Gen::GtOne:
          v.push_back(1.2 + 1.3 * u);
          break;
        case Gen::Tied2:
          v.push_back(0.0);
          break;
      }
    }
    if (in.gen == Gen::Tied2) {
      size_t n = v.size(), h = (n + 1) / 2;
      for (size_t j = 0; j < h; j++) v[j] = ((double)((j * 7) % h) - (double)h / 2) * 0.07 + 0.011;
      for (size_t j = h; j < n; j++) v[j] = v[n - 1 - j];
    }
    out.push_back(v);
  }
  return out;
}

std::vector<Tensor> make_inputs(const GradCase& c, const std::vector<std::vector<double>>& vals) {
  std::vector<Tensor> ts;
  for (size_t i = 0; i < c.in.size(); i++)
    ts.push_back(Tensor::from_vector(vals[i], c.dtype).reshape(to_shape(c.in[i].shape)));
  return ts;
}

std::vector<double> read(const Tensor& t) { return t.cast(dtypes::float64).to_vector<double>(); }

// L = sum(f(x) * W)
Tensor loss(const Tensor& out, const Tensor& w) { return (out.cast(dtypes::float64) * w).sum(); }

std::string where(const GradCase& c, size_t i, int64_t j) {
  return c.name + ": d/d(input " + std::to_string(i) + ")[" + std::to_string(j) + "]";
}

struct Result {
  std::vector<std::vector<double>> fd, by_gradient, by_backward;
};

// evaluations realized per schedule: scheduling cost grows faster than linearly with the graph, 8 is the fastest
constexpr size_t kBatch = 8;
Result run_case(const GradCase& c) {
  ScopedDev dev(c.dev);
  // the gradient graphs are what is checked here, not the kernel optimizer: NOOPT keeps the kernels small and their
  // LLVM compiles short (float64 transcendentals upcast by 4 take ~0.4 s each)
  Context noopt({{"NOOPT", 1}});
  std::optional<Context> train;
  if (c.training) train.emplace(std::initializer_list<std::pair<const char*, int64_t>>{{"TRAINING", 1}});
  std::vector<std::vector<double>> vals = gen_inputs(c);
  std::vector<Tensor> xs = make_inputs(c, vals);
  Tensor::realize_all(xs);
  // the output weights W: mixed signs, |W| in [0.5, 1.5)
  Tensor out = c.f(xs);
  Lcg rng(7);
  std::vector<double> wv;
  for (sint n = out.numel(); (int64_t)wv.size() < n.i();)
    wv.push_back((rng.next() < 0.5 ? -1 : 1) * (0.5 + rng.next()));
  Tensor w = Tensor::from_vector(wv).reshape(out.shape()).realize();

  Result r;
  // autograd: gradient() and backward() of the same L
  Tensor L = loss(out, w);
  std::vector<Tensor> g = L.gradient(xs);
  Tensor::realize_all(g);
  for (const Tensor& t : g) r.by_gradient.push_back(read(t));
  L.backward();
  std::vector<Tensor> bg;
  for (const Tensor& x : xs)
    if (std::optional<Tensor> gx = x.grad()) bg.push_back(*gx);
  Tensor::realize_all(bg);
  for (const Tensor& x : xs) {
    std::optional<Tensor> gx = x.grad();
    r.by_backward.push_back(gx ? read(*gx) : std::vector<double>());
  }
  // central differences, realized in batches
  std::vector<Tensor> evals;
  for (size_t i = 0; i < xs.size(); i++)
    for (size_t j = 0; j < vals[i].size(); j++)
      for (double sgn : {1.0, -1.0}) {
        std::vector<std::vector<double>> v = vals;
        v[i][j] += sgn * c.eps;
        evals.push_back(loss(c.f(make_inputs(c, v)), w));
      }
  std::vector<double> lv;
  for (size_t b = 0; b < evals.size(); b += kBatch) {
    std::vector<Tensor> batch(evals.begin() + (ptrdiff_t)b,
                              evals.begin() + (ptrdiff_t)std::min(b + kBatch, evals.size()));
    Tensor::realize_all(batch);
    for (const Tensor& t : batch) lv.push_back(t.item<double>());
  }
  size_t k = 0;
  for (size_t i = 0; i < xs.size(); i++) {
    r.fd.emplace_back();
    for (size_t j = 0; j < vals[i].size(); j++, k += 2) r.fd.back().push_back((lv[k] - lv[k + 1]) / (2 * c.eps));
  }
  return r;
}

// ********** the cases **********

Tensor ints(const std::vector<int32_t>& v, const std::vector<int64_t>& shape) {
  return Tensor::from_vector(v).reshape(to_shape(shape));
}
Tensor floats(const std::vector<double>& v, const std::vector<int64_t>& shape) {
  return Tensor::from_vector(v).reshape(to_shape(shape));
}
Tensor mask34() { return Tensor::from_vector<bool>({1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0}).reshape({3, 4}); }

#define F(body) [](const std::vector<Tensor>& x) -> Tensor { return body; }

std::vector<GradCase> elementwise_cases() {
  return {
      {"add", {{{3, 4}}, {{3, 4}}}, F(x[0] + x[1])},
      {"add_broadcast", {{{3, 4}}, {{4}}}, F(x[0] + x[1])},
      {"sub", {{{3, 4}}, {{3, 4}}}, F(x[0] - x[1])},
      {"sub_broadcast_both", {{{3, 1}}, {{1, 4}}}, F(x[0] - x[1])},
      {"rsub_scalar", {{{3, 4}}}, F(1.5 - x[0])},
      {"mul", {{{3, 4}}, {{3, 4}}}, F(x[0] * x[1])},
      {"mul_self", {{{3, 4}}}, F(x[0] * x[0])},
      {"mul_scalar", {{{3, 4}}}, F(x[0] * 2.5)},
      {"div", {{{3, 4}}, {{3, 4}, Gen::Away}}, F(x[0] / x[1])},
      {"rdiv_scalar", {{{3, 4}, Gen::Away}}, F(1.5 / x[0])},
      {"pow", {{{3, 4}, Gen::Pos}, {{3, 4}}}, F(x[0].pow(x[1]))},
      {"pow_scalar_exp", {{{3, 4}, Gen::Pos}}, F(x[0].pow(2.5))},
      {"pow_int_exp_neg_base", {{{3, 4}, Gen::Away}}, F(x[0].pow(3))},
      {"pow_neg_exp", {{{3, 4}, Gen::Pos}}, F(x[0].pow(-1.5))},
      {"rpow", {{{3, 4}}}, F(x[0].pow(2.0, true))},
      {"exp", {{{3, 4}}}, F(x[0].exp())},
      {"exp2", {{{3, 4}}}, F(x[0].exp2())},
      {"log", {{{3, 4}, Gen::Pos}}, F(x[0].log())},
      {"log2", {{{3, 4}, Gen::Pos}}, F(x[0].log2())},
      {"log10", {{{3, 4}, Gen::Pos}}, F(x[0].log10())},
      {"sqrt", {{{3, 4}, Gen::Pos}}, F(x[0].sqrt())},
      {"rsqrt", {{{3, 4}, Gen::Pos}}, F(x[0].rsqrt())},
      {"reciprocal", {{{3, 4}, Gen::Away}}, F(x[0].reciprocal())},
      {"sin", {{{3, 4}}}, F((x[0] * 3).sin())},
      {"cos", {{{3, 4}}}, F((x[0] * 3).cos())},
      {"tan", {{{3, 4}}}, F(x[0].tan())},
      {"neg", {{{3, 4}}}, F(-x[0])},
      {"abs", {{{3, 4}, Gen::Away}}, F(x[0].abs())},
      {"square", {{{3, 4}}}, F(x[0].square())},
      {"maximum", {{{3, 4}, Gen::Distinct}, {{3, 4}, Gen::Distinct}}, F(x[0].maximum(x[1]))},
      {"maximum_scalar", {{{3, 4}, Gen::Away}}, F(x[0].maximum(0.1))},
      // a tie splits the gradient in halves, which is also the central difference of a 2-way tie
      {"maximum_tie2", {{{3, 4}, Gen::Tied2}}, F(x[0].maximum(x[0].flip({0, 1})))},
      {"minimum", {{{3, 4}, Gen::Distinct}, {{3, 4}, Gen::Distinct}}, F(x[0].minimum(x[1]))},
      {"minimum_broadcast", {{{3, 4}, Gen::Distinct}, {{4}, Gen::Distinct}}, F(x[0].minimum(x[1]))},
      {"where", {{{3, 4}}, {{3, 4}}}, F(mask34().where(x[0], x[1]))},
      {"where_scalar", {{{3, 4}}}, F(mask34().where(x[0], 0.5))},
      {"where_broadcast", {{{4}}, {{3, 1}}}, F(mask34().where(x[0], x[1]))},
      {"clip", {{{3, 4}, Gen::Distinct}}, F(x[0].clip(-0.3, 0.25))},
      {"lerp", {{{3, 4}}, {{3, 4}}, {{3, 4}}}, F(x[0].lerp(x[1], x[2]))},
      {"cast_float32_roundtrip",
       {{{3, 4}}},
       F(x[0].cast(dtypes::float32).cast(dtypes::float64) * x[0]),
       1e-3,
       1e-3,
       1e-3},
      {"contiguous", {{{3, 4}}}, F(x[0].contiguous() * x[0])},
  };
}

std::vector<GradCase> activation_cases() {
  return {
      {"relu", {{{3, 4}, Gen::Away}}, F(x[0].relu())},
      {"relu6", {{{3, 4}, Gen::Away}}, F((x[0] * 8).relu6())},
      {"leaky_relu", {{{3, 4}, Gen::Away}}, F(x[0].leaky_relu(0.1))},
      {"elu", {{{3, 4}, Gen::Away}}, F(x[0].elu())},
      {"celu", {{{3, 4}, Gen::Away}}, F(x[0].celu(0.7))},
      {"selu", {{{3, 4}, Gen::Away}}, F(x[0].selu())},
      {"gelu", {{{3, 4}}}, F((x[0] * 2).gelu())},
      {"gelu_erf", {{{3, 4}}}, F((x[0] * 2).gelu("none"))},
      {"quick_gelu", {{{3, 4}}}, F((x[0] * 2).quick_gelu())},
      {"silu", {{{3, 4}}}, F((x[0] * 2).silu())},
      {"swish", {{{3, 4}}}, F((x[0] * 2).swish())},
      {"sigmoid", {{{3, 4}}}, F((x[0] * 3).sigmoid())},
      {"hardsigmoid", {{{3, 4}, Gen::Away}}, F((x[0] * 4).hardsigmoid())},
      {"tanh", {{{3, 4}}}, F((x[0] * 2).tanh())},
      {"hardtanh", {{{3, 4}, Gen::Distinct}}, F((x[0] * 3).hardtanh())},
      {"softplus", {{{3, 4}}}, F((x[0] * 2).softplus())},
      {"softplus_beta", {{{3, 4}}}, F((x[0] * 2).softplus(2.0))},
      {"mish", {{{3, 4}}}, F((x[0] * 2).mish())},
      {"logsigmoid", {{{3, 4}}}, F((x[0] * 2).logsigmoid())},
      {"softsign", {{{3, 4}}}, F((x[0] * 2).softsign())},
      {"hardswish", {{{3, 4}, Gen::Away}}, F((x[0] * 4).hardswish())},
      {"erf", {{{3, 4}}}, F(x[0].erf())},
      {"sinh", {{{3, 4}}}, F(x[0].sinh())},
      {"cosh", {{{3, 4}}}, F(x[0].cosh())},
      {"atan", {{{3, 4}}}, F((x[0] * 2).atan())},
      {"asin", {{{3, 4}}}, F((x[0] * 0.9).asin())},
      {"acos", {{{3, 4}}}, F((x[0] * 0.9).acos())},
      {"atanh", {{{3, 4}}}, F((x[0] * 0.9).atanh())},
      {"asinh", {{{3, 4}}}, F((x[0] * 2).asinh())},
      {"acosh", {{{3, 4}, Gen::GtOne}}, F(x[0].acosh())},
  };
}

std::vector<GradCase> reduce_cases() {
  return {
      {"sum", {{{3, 4}}}, F(x[0].sum())},
      {"sum_axis0", {{{3, 4}}}, F(x[0].sum(0))},
      {"sum_axis1_keepdim", {{{3, 4}}}, F(x[0].sum(1, true) * x[0])},
      {"sum_axes02", {{{2, 3, 4}}}, F(x[0].sum({0, 2}))},
      {"mean", {{{3, 4}}}, F(x[0].mean() * x[0])},
      {"mean_axis", {{{3, 4}}}, F(x[0].mean(-1))},
      {"max", {{{3, 4}, Gen::Distinct}}, F(x[0].max())},
      {"max_axis", {{{3, 4}, Gen::Distinct}}, F(x[0].max(1))},
      {"max_tie2", {{{3, 4}, Gen::Tied2}}, F(x[0].max())},
      {"min_tie2", {{{2, 3}, Gen::Tied2}}, F(x[0].min() * 1.5)},
      {"max_axis0_keepdim", {{{3, 4}, Gen::Distinct}}, F(x[0].max(0, true) * x[0])},
      {"min_axis", {{{3, 4}, Gen::Distinct}}, F(x[0].min(0))},
      {"prod_axis", {{{3, 4}, Gen::Away}}, F(x[0].prod(1))},
      {"prod", {{{2, 3}, Gen::Away}}, F(x[0].prod())},
      {"var", {{{3, 4}}}, F(x[0].var())},
      {"var_axis", {{{3, 4}}}, F(x[0].var(1))},
      {"var_correction0", {{{3, 4}}}, F(x[0].var(0, false, 0))},
      {"std", {{{3, 4}}}, F(x[0].std())},
      {"std_axis", {{{3, 4}}}, F(x[0].std(1, true))},
      {"softmax", {{{3, 4}}}, F((x[0] * 2).softmax())},
      {"softmax_axis0", {{{3, 4}}}, F((x[0] * 2).softmax(0))},
      {"log_softmax", {{{3, 4}}}, F((x[0] * 2).log_softmax())},
      {"log_softmax_axis0", {{{3, 4}}}, F((x[0] * 2).log_softmax(0))},
      {"logsumexp", {{{3, 4}}}, F((x[0] * 2).logsumexp())},
      {"logsumexp_axis", {{{3, 4}}}, F((x[0] * 2).logsumexp(1))},
      {"cumsum", {{{3, 4}}}, F(x[0].cumsum(1))},
      {"cumprod", {{{3, 4}, Gen::Away}}, F(x[0].cumprod(1))},
      {"normalize", {{{3, 4}}}, F(x[0].normalize(2.0, 1))},
  };
}

std::vector<GradCase> matmul_movement_cases() {
  return {
      {"matmul", {{{3, 4}}, {{4, 5}}}, F(x[0].matmul(x[1]))},
      {"matmul_batched", {{{2, 3, 4}}, {{4, 2}}}, F(x[0].matmul(x[1]))},
      {"matmul_batched_both", {{{2, 3, 2}}, {{2, 2, 3}}}, F(x[0].matmul(x[1]))},
      {"matmul_vec", {{{4}}, {{4, 3}}}, F(x[0].matmul(x[1]))},
      {"dot_vec_vec", {{{5}}, {{5}}}, F(x[0].dot(x[1]))},
      {"linear", {{{2, 4}}, {{3, 4}}, {{3}}}, F(x[0].linear(x[1].T(), x[2]))},
      {"einsum", {{{2, 3}}, {{3, 4}}}, F(Tensor::einsum("ij,jk->ik", {x[0], x[1]}))},
      {"reshape", {{{3, 4}}}, F(x[0].reshape({2, 6}) * x[0].reshape({2, 6}).flip(1))},
      {"permute", {{{2, 3, 4}}}, F(x[0].permute({2, 0, 1}))},
      {"transpose", {{{3, 4}}}, F(x[0].T().matmul(x[0]))},
      {"expand", {{{3, 1}}}, F(x[0].expand({3, 4}))},
      {"pad", {{{3, 4}}}, F(x[0].pad({{1, 2}, {0, 1}}))},
      {"pad_value", {{{3, 4}}}, F(x[0].pad({{1, 0}, {2, 1}}, "constant", 0.7) * 2)},
      {"pad_reflect", {{{3, 4}}}, F(x[0].pad({{1, 1}, {2, 1}}, "reflect"))},
      {"pad_replicate", {{{3, 4}}}, F(x[0].pad({{2, 0}, {1, 1}}, "replicate"))},
      {"pad_circular", {{{3, 4}}}, F(x[0].pad({{1, 1}, {1, 2}}, "circular"))},
      {"shrink", {{{3, 4}}}, F(x[0].shrink({{1, 3}, {0, 2}}))},
      {"flip", {{{3, 4}}}, F(x[0].flip(1))},
      {"flip_both", {{{3, 4}}}, F(x[0].flip({0, 1}))},
      {"slice", {{{4, 5}}}, F(x[0].getitem({Index::slice(1, 3), Index::slice(std::nullopt, std::nullopt, 2)}))},
      {"slice_negative_step",
       {{{4, 5}}},
       F(x[0].getitem({Index::slice(std::nullopt, std::nullopt, -1), Index::slice(1)}))},
      {"slice_step3_neg", {{{7}}}, F(x[0].getitem({Index::slice(5, 0, -3)}))},
      {"int_index", {{{3, 4}}}, F(x[0][1])},
      {"index_none_ellipsis", {{{2, 3}}}, F(x[0].getitem({Index(std::nullopt), Ellipsis, Index(-1)}))},
      {"tensor_index", {{{4, 3}}}, F(x[0].getitem(ints({2, 0, 2, -1}, {4})))},
      {"tensor_index_2d",
       {{{3, 4}}},
       F(x[0].getitem({Index(ints({0, 2}, {2}).uop()), Index(ints({1, 3}, {2}).uop())}))},
      {"cat", {{{2, 3}}, {{2, 2}}}, F(x[0].cat({x[1]}, 1))},
      {"cat_dim0_three", {{{1, 3}}, {{2, 3}}, {{1, 3}}}, F(x[0].cat({x[1], x[2]}))},
      {"stack", {{{2, 3}}, {{2, 3}}}, F(Tensor::stack({x[0], x[1]}, 1))},
      {"repeat", {{{2, 3}}}, F(x[0].repeat({2, 1}))},
      {"squeeze_unsqueeze", {{{3, 1, 4}}}, F(x[0].squeeze(1).unsqueeze(0))},
      {"chunk", {{{4, 3}}}, F(x[0].chunk(2)[1] * x[0].chunk(2)[0])},
      {"split", {{{5, 2}}}, F(x[0].split(2)[2])},
      {"roll", {{{3, 4}}}, F(x[0].roll({1, -1}, std::vector<int64_t>{0, 1}))},
      {"unfold", {{{7}}}, F(x[0].unfold(0, 3, 2))},
      {"triu", {{{3, 4}}}, F(x[0].triu(1))},
      {"diagonal", {{{3, 4}}}, F(x[0].diagonal())},
      // setitem into an unrealized float tensor replaces it with _getitem(indices, v): gradients reach self and v
      {"setitem_basic",
       {{{3, 4}}, {{2, 4}}},
       [](const std::vector<Tensor>& x) {
         Tensor t = x[0] * 2;
         t.setitem({Index::slice(1, 3)}, x[1]);
         return t;
       }},
      {"setitem_step_flip_broadcast",
       {{{4, 4}}, {{4}}},
       [](const std::vector<Tensor>& x) {
         Tensor t = x[0] * 2;
         t.setitem({Index::slice(std::nullopt, std::nullopt, 2), Index::slice(std::nullopt, std::nullopt, -1)}, x[1]);
         return t;
       }},
      {"setitem_advanced",
       {{{4, 3}}, {{2, 3}}},
       [](const std::vector<Tensor>& x) {
         Tensor t = x[0] * 2;
         t.setitem(ints({0, 2}, {2}), x[1]);
         return t;
       }},
      {"setitem_scalar",
       {{{3, 4}}},
       [](const std::vector<Tensor>& x) {
         Tensor t = x[0] * 2;
         t.setitem({Index(1), Index(2)}, 0.5);
         return t;
       }},
      {"repeat_interleave", {{{2, 3}}}, F(x[0].repeat_interleave(2, 1))},
  };
}

std::vector<GradCase> nn_op_cases() {
  return {
      {"conv2d", {{{2, 2, 5, 5}}, {{3, 2, 3, 3}}}, F(x[0].conv2d(x[1]))},
      {"conv2d_bias", {{{1, 2, 4, 4}}, {{3, 2, 3, 3}}, {{3}}}, F(x[0].conv2d(x[1], x[2]))},
      {"conv2d_stride2_pad1", {{{1, 2, 5, 5}}, {{2, 2, 3, 3}}}, F(x[0].conv2d(x[1], std::nullopt, 1, 2, 1, 1))},
      {"conv2d_dilation2", {{{1, 1, 6, 6}}, {{2, 1, 2, 2}}}, F(x[0].conv2d(x[1], std::nullopt, 1, 1, 2))},
      {"conv2d_groups2", {{{1, 4, 4, 4}}, {{4, 2, 2, 2}}, {{4}}}, F(x[0].conv2d(x[1], x[2], 2))},
      {"conv2d_all",
       {{{1, 4, 6, 5}}, {{2, 2, 3, 2}}, {{2}}},
       F(x[0].conv2d(x[1], x[2], 2, {2, 1}, {1, 2}, {1, 2, 0, 1}))},
      {"conv1d", {{{2, 2, 7}}, {{3, 2, 3}}}, F(x[0].conv2d(x[1], std::nullopt, 1, 2, 1, 1))},
      {"conv_transpose2d", {{{1, 2, 3, 3}}, {{2, 3, 2, 2}}}, F(x[0].conv_transpose2d(x[1]))},
      {"conv_transpose2d_stride2_pad_outpad",
       {{{1, 2, 3, 3}}, {{2, 1, 3, 3}}, {{1}}},
       F(x[0].conv_transpose2d(x[1], x[2], 1, 2, 1, 1, 1))},
      {"conv_transpose2d_groups_dilation",
       {{{1, 4, 3, 3}}, {{4, 1, 2, 2}}},
       F(x[0].conv_transpose2d(x[1], std::nullopt, 2, 1, 2))},
      {"max_pool2d", {{{1, 2, 4, 4}, Gen::Distinct}}, F(x[0].max_pool2d())},
      {"max_pool2d_k3_s1_p1", {{{1, 1, 4, 4}, Gen::Distinct}}, F(x[0].max_pool2d({3, 3}, IntTuple(1), 1, 1))},
      {"max_pool2d_k2_s2_d2", {{{1, 1, 6, 6}, Gen::Distinct}}, F(x[0].max_pool2d({2, 2}, IntTuple(2), 2))},
      {"avg_pool2d", {{{1, 2, 4, 4}}}, F(x[0].avg_pool2d())},
      {"avg_pool2d_k3_s1", {{{1, 1, 4, 5}}}, F(x[0].avg_pool2d({3, 3}, IntTuple(1)))},
      {"batchnorm_op",
       {{{2, 3, 2, 2}}, {{3}}, {{3}}, {{3}}, {{3}, Gen::Pos}},
       F(x[0].batchnorm(x[1], x[2], x[3], x[4]))},
      {"layernorm", {{{3, 5}}}, F(x[0].layernorm())},
      {"layernorm_axes", {{{2, 2, 3}}}, F(x[0].layernorm({1, 2}))},
      {"dropout", {{{4, 5}}}, F((Tensor::manual_seed(3), x[0].dropout(0.4))), 1e-6, 1e-7, 1e-6, true},
      {"dropout_p1", {{{2, 3}}}, F(x[0] * 2 + x[0].dropout(1.0)), 1e-6, 1e-7, 1e-6, true},
      {"dropout_eval", {{{2, 3}}}, F(x[0].dropout(0.5))},
      {"sparse_categorical_crossentropy",
       {{{4, 5}}},
       F((x[0] * 2).sparse_categorical_crossentropy(ints({1, 0, 4, 2}, {4})))},
      {"sparse_categorical_crossentropy_smooth_ignore",
       {{{4, 5}}},
       F((x[0] * 2).sparse_categorical_crossentropy(ints({1, -1, 4, 2}, {4}), -1, 0.1))},
      {"sparse_categorical_crossentropy_sum",
       {{{3, 4}}},
       F((x[0] * 2).sparse_categorical_crossentropy(ints({3, 0, 1}, {3}), -1, 0.0, "sum"))},
      {"sparse_categorical_crossentropy_none",
       {{{3, 4}}},
       F((x[0] * 2).sparse_categorical_crossentropy(ints({3, 0, 1}, {3}), -1, 0.0, "none"))},
      {"cross_entropy_index", {{{4, 5}}}, F((x[0] * 2).cross_entropy(ints({1, 0, 4, 2}, {4})))},
      {"cross_entropy_probs_smooth",
       {{{2, 3}}},
       F((x[0] * 2).cross_entropy(floats({0.2, 0.3, 0.5, 1, 0, 0}, {2, 3}), "sum", 0.2))},
      {"binary_crossentropy", {{{6}, Gen::Unit}}, F(x[0].binary_crossentropy(floats({1, 0, 0, 1, 1, 0}, {6})))},
      {"binary_crossentropy_logits",
       {{{2, 3}}},
       F((x[0] * 3).binary_crossentropy_logits(floats({1, 0, 0, 1, 1, 0}, {2, 3}), "sum"))},
      {"nll_loss", {{{3, 4}}}, F((x[0] * 2).log_softmax().nll_loss(ints({3, 0, 1}, {3})))},
      {"gather", {{{3, 4}}}, F(x[0].gather(1, ints({0, 3, 1, 1, 2, 0}, {3, 2})))},
      {"gather_dim0", {{{3, 4}}}, F(x[0].gather(0, ints({2, 0, 1, 2, 0, 0, 2, 1}, {2, 4})))},
      {"scatter", {{{3, 4}}, {{2, 4}}}, F(x[0].scatter(0, ints({2, 0, 1, 2, 0, 1, 0, 0}, {2, 4}), x[1]))},
      {"scatter_scalar", {{{3, 4}}}, F(x[0].scatter(1, ints({1, 3, 0}, {3, 1}), 0.5))},
      {"scatter_reduce_sum",
       {{{3, 4}}, {{2, 4}}},
       F(x[0].scatter_reduce(0, ints({2, 0, 1, 2, 2, 0, 1, 1}, {2, 4}), x[1], "sum"))},
      {"scatter_reduce_mean",
       {{{3, 4}}, {{2, 4}}},
       F(x[0].scatter_reduce(0, ints({2, 0, 1, 2, 2, 0, 1, 1}, {2, 4}), x[1], "mean"))},
      {"interpolate_linear", {{{1, 1, 4}}}, F(x[0].interpolate({7}))},
  };
}

// layers: the parameters are the case's inputs (float64), set on a layer built like the reference's
std::vector<GradCase> layer_cases() {
  return {
      {"nn_Linear",
       {{{2, 4}}, {{3, 4}}, {{3}}},
       [](const std::vector<Tensor>& x) {
         Tensor::manual_seed(0);
         nn::Linear l(4, 3);
         l.weight = x[1], l.bias = x[2];
         return l(x[0]);
       }},
      {"nn_Conv2d",
       {{{1, 2, 4, 4}}, {{2, 2, 3, 3}}, {{2}}},
       [](const std::vector<Tensor>& x) {
         Tensor::manual_seed(0);
         nn::Conv2d l(2, 2, 3, 1, 1);
         l.weight = x[1], l.bias = x[2];
         return l(x[0]);
       }},
      {"nn_ConvTranspose2d",
       {{{1, 2, 3, 3}}, {{2, 2, 2, 2}}, {{2}}},
       [](const std::vector<Tensor>& x) {
         Tensor::manual_seed(0);
         nn::ConvTranspose2d l(2, 2, 2, 2);
         l.weight = x[1], l.bias = x[2];
         return l(x[0]);
       }},
      {"nn_BatchNorm_training",
       {{{3, 2, 2, 2}}, {{2}}, {{2}}},
       [](const std::vector<Tensor>& x) {
         nn::BatchNorm l(2);
         l.weight = x[1], l.bias = x[2];
         l.running_mean = Tensor::zeros({2}, dtypes::float64), l.running_var = Tensor::ones({2}, dtypes::float64);
         return l(x[0]);
       },
       1e-6,
       1e-7,
       1e-6,
       true},
      {"nn_BatchNorm_eval",
       {{{2, 2, 2}}, {{2}}, {{2}}},
       [](const std::vector<Tensor>& x) {
         nn::BatchNorm l(2);
         l.weight = x[1], l.bias = x[2];
         l.running_mean = floats({0.3, -0.2}, {2}), l.running_var = floats({0.5, 2.0}, {2});
         return l(x[0]);
       }},
      {"nn_LayerNorm",
       {{{2, 3, 4}}, {{4}}, {{4}}},
       [](const std::vector<Tensor>& x) {
         nn::LayerNorm l(4);
         l.weight = x[1], l.bias = x[2];
         return l(x[0]);
       }},
      // RMSNorm normalizes in float32 (x.float()) like the reference: float32 tolerances
      {"nn_RMSNorm",
       {{{2, 5}}, {{5}}},
       [](const std::vector<Tensor>& x) {
         nn::RMSNorm l(5);
         l.weight = x[1];
         return l(x[0]);
       },
       2e-3,
       2e-4,
       1e-3},
      {"nn_Embedding",
       {{{5, 3}}},
       [](const std::vector<Tensor>& x) {
         Tensor::manual_seed(0);
         nn::Embedding l(5, 3);
         l.weight = x[0];
         return l(ints({4, 0, 2, 4, 1, 1}, {2, 3}));
       }},
      {"nn_GroupNorm",
       {{{2, 4, 2, 2}}, {{4}}, {{4}}},
       [](const std::vector<Tensor>& x) {
         nn::GroupNorm l(2, 4);
         l.weight = x[1], l.bias = x[2];
         return l(x[0]);
       }},
      {"nn_InstanceNorm",
       {{{2, 2, 3}}, {{2}}, {{2}}},
       [](const std::vector<Tensor>& x) {
         nn::InstanceNorm l(2);
         l.weight = x[1], l.bias = x[2];
         return l(x[0]);
       }},
      {"nn_LSTMCell",
       {{{2, 3}}, {{8, 3}}, {{8, 2}}, {{8}}, {{8}}, {{2, 2}}, {{2, 2}}},
       [](const std::vector<Tensor>& x) {
         Tensor::manual_seed(0);
         nn::LSTMCell l(3, 2);
         l.weight_ih = x[1], l.weight_hh = x[2], l.bias_ih = x[3], l.bias_hh = x[4];
         auto [h, c] = l(x[0], std::make_pair(x[5], x[6]));
         return h.cat({c}, 1);
       }},
      // without a state h is 0: weight_hh gets no gradient, it is not an input here
      {"nn_LSTMCell_no_state",
       {{{2, 3}}, {{8, 3}}},
       [](const std::vector<Tensor>& x) {
         Tensor::manual_seed(0);
         nn::LSTMCell l(3, 2, false);
         l.weight_ih = x[1], l.weight_hh = l.weight_hh.cast(dtypes::float64);
         auto [h, c] = l(x[0]);
         return h.cat({c}, 1);
       }},
      {"mlp_two_layers_loss",
       {{{4, 3}}, {{5, 3}}, {{5}}, {{3, 5}}},
       [](const std::vector<Tensor>& x) {
         Tensor h = x[0].linear(x[1].T(), x[2]).gelu();
         return h.linear(x[3].T()).sparse_categorical_crossentropy(ints({0, 2, 1, 2}, {4}));
       }},
  };
}

// float32, the dtype training runs in (beautiful_mnist's pieces): eps 1e-2 and 1e-2 relative tolerances, which still
// fail on gradients that are off by a few percent
std::vector<GradCase> float32_cases() {
  const double r = 1e-2, a = 3e-3, e = 1e-2;
  auto f32 = [](GradCase c) {
    c.dtype = dtypes::float32;
    return c;
  };
  return {
      f32({"f32_matmul_relu", {{{3, 4}}, {{4, 2}, Gen::Away}}, F((x[0].matmul(x[1]) + 0.05).relu()), r, a, e}),
      f32({"f32_conv2d_bias",
           {{{1, 2, 4, 4}}, {{2, 2, 3, 3}}, {{2}}},
           F(x[0].conv2d(x[1], x[2], 1, 1, 1, 1)),
           r,
           a,
           e}),
      f32({"f32_max_pool2d", {{{1, 2, 4, 4}, Gen::Distinct}}, F(x[0].max_pool2d()), r, a, e}),
      f32({"f32_sparse_categorical_crossentropy",
           {{{4, 5}}},
           F((x[0] * 2).sparse_categorical_crossentropy(ints({1, 0, 4, 2}, {4}))),
           r,
           a,
           e}),
      f32({"f32_nn_BatchNorm_training",
           {{{3, 2, 2, 2}}, {{2}}, {{2}}},
           [](const std::vector<Tensor>& x) {
             nn::BatchNorm l(2);
             l.weight = x[1], l.bias = x[2];
             return l(x[0]);
           },
           r,
           a,
           e,
           true}),
      // beautiful_mnist in small: conv, relu, BatchNorm (training), max_pool, linear, sparse categorical cross-entropy
      f32({"f32_mnist_like_model",
           {{{2, 1, 6, 6}}, {{2, 1, 3, 3}}, {{2}}, {{3, 8}}},
           [](const std::vector<Tensor>& x) {
             nn::BatchNorm bn(2);
             Tensor h = bn(x[0].conv2d(x[1], x[2]).relu()).max_pool2d().flatten(1);
             return h.linear(x[3].T()).sparse_categorical_crossentropy(ints({2, 0}, {2}));
           },
           r,
           a,
           e,
           true}),
  };
}

#undef F

std::vector<GradCase> all_cases() {
  std::vector<GradCase> all;
  for (auto* f : {elementwise_cases, activation_cases, reduce_cases, matmul_movement_cases, nn_op_cases, layer_cases,
                  float32_cases})
    for (GradCase& c : f()) all.push_back(std::move(c));
  // a few cases again on the interpreter (the reference's PYTHON device): the same gradient graphs through another
  // backend
  for (const char* name : {"sin", "softmax", "conv2d_stride2_pad1", "max_pool2d", "nn_BatchNorm_training",
                           "sparse_categorical_crossentropy", "setitem_advanced"})
    for (size_t i = 0, n = all.size(); i < n; i++)
      if (all[i].name == name) {
        GradCase c = all[i];
        c.name = "interp_" + c.name, c.dev = "INTERP";
        all.push_back(c);
      }
  return all;
}

class GradCheck : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradCheck, MatchesFiniteDifferences) {
  const GradCase& c = GetParam();
  Result r = run_case(c);
  for (size_t i = 0; i < c.in.size(); i++) {
    ASSERT_EQ(r.by_gradient[i].size(), r.fd[i].size()) << where(c, i, -1);
    ASSERT_EQ(r.by_backward[i].size(), r.fd[i].size()) << where(c, i, -1) << " (backward gave no .grad)";
    double maxabs = 0;
    for (size_t j = 0; j < r.fd[i].size(); j++) {
      double fd = r.fd[i][j];
      maxabs = std::max(maxabs, std::abs(fd));
      for (double ad : {r.by_gradient[i][j], r.by_backward[i][j]}) {
        double tol = c.atol + c.rtol * std::max(std::abs(fd), std::abs(ad));
        EXPECT_LE(std::abs(ad - fd), tol)
            << where(c, i, (int64_t)j) << ": autograd " << ad << ", finite difference " << fd;
      }
    }
    // a check only means something if the gradient is not zero everywhere
    EXPECT_GT(maxabs, 1e-3) << c.name << ": input " << i << " has an all-zero gradient";
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, GradCheck, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<GradCase>& info) { return info.param.name; });

}  // namespace
