// compute_gradient against the reference: every case of tests/data/gradient_goldens.txt (gen_gradient_goldens.py) is
// built again with the C++ API, differentiated with tg::gradient and must encode to exactly the reference's gradient
// graphs (a SINK of one gradient per target), or throw tg::Error where the reference raised.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "lib/function.h"
#include "lib/helpers.h"
#include "lib/mixin/gradient.h"
#include "lib/tensor.h"
#include "lib/uop/serialize.h"
#include "tests/support/golden_file.h"

using namespace tg;

namespace {

struct Golden {
  std::string name, error;
  std::vector<std::string> graph;
};

std::vector<Golden> load() {
  std::vector<Golden> out;
  for (const test::GoldenCase& c : test::load_cases(TG_TEST_DATA "/gradient_goldens.txt", {"graph"}))
    out.push_back({c.name, c.value("error"), c.block("graph")});
  return out;
}

struct Case {
  UOp out;
  std::vector<UOp> targets;
  UOp grad;
};

UOp P(int64_t slot, DType dt, Shape shape) { return UOp::param(slot, dt, shape); }
UOp X() { return P(0, dtypes::float32, {2, 3}); }
UOp Y() { return P(1, dtypes::float32, {2, 3}); }
UOp W() { return P(2, dtypes::float32, {3, 4}); }
UOp V() { return P(3, dtypes::float32, {3}); }
UOp S() { return P(4, dtypes::float32, {}); }
UOp H() { return P(5, dtypes::float16, {2, 3}); }
UOp IMG() { return P(6, dtypes::float32, {1, 2, 5, 5}); }
UOp K() { return P(7, dtypes::float32, {3, 2, 3, 3}); }

// FUNCTIONs as tinygrad.function.function builds them (gen_gradient_goldens.py F): the body runs on the arguments,
// call_function turns those on a device into PARAMs and calls the FUNCTION
UOp D(int64_t slot, Shape shape) { return UOp::param(slot, dtypes::float32, shape, Arg("CPU")); }
std::vector<UOp> F(const std::string& name, std::function<std::vector<UOp>(const std::vector<UOp>&)> body,
                   std::vector<UOp> args, FunctionOpts opts = {}) {
  opts.name = name;
  std::vector<UOp> rets = body(args);
  return call_function(args, rets, opts);
}
std::vector<UOp> mlp(const std::vector<UOp>& a) { return {(a[0].matmul(a[1]) + a[2]).relu()}; }
std::vector<UOp> two_outs(const std::vector<UOp>& a) { return {a[0] * a[1], (a[0] + a[1]).exp()}; }
std::vector<UOp> square(const std::vector<UOp>& a) { return {a[0].matmul(a[1]).tanh()}; }
std::vector<UOp> with_buf(const std::vector<UOp>& a) {
  UOp ib = UOp::new_buffer(Arg("CPU"), 3, dtypes::float32, 1000).reshape({3});
  return {(a[0] * ib).sum(1)};
}
FunctionOpts precompiled() {
  FunctionOpts o;
  o.precompile = true;
  return o;
}
FunctionOpts precompiled_backward() {
  FunctionOpts o;
  o.precompile_backward = true;
  return o;
}
FunctionOpts implicit() {
  FunctionOpts o;
  o.allow_implicit = true;
  return o;
}

const std::map<std::string, std::function<Case()>>& table() {
  static const std::map<std::string, std::function<Case()>> t = {
      {"add",
       [] {
         UOp x = X(), y = Y();
         return Case{x + y, {x, y}, Y().const_like(1.0)};
       }},
      {"sum_add",
       [] {
         UOp x = X(), y = Y();
         return Case{(x + y).sum(), {x, y}};
       }},
      {"sub_mul",
       [] {
         UOp x = X(), y = Y();
         return Case{(x - y * x).sum(), {x, y}};
       }},
      {"div",
       [] {
         UOp x = X(), y = Y();
         return Case{(x / y).sum(), {x, y}};
       }},
      {"reciprocal",
       [] {
         UOp x = X();
         return Case{x.reciprocal().sum(), {x}};
       }},
      {"exp_log",
       [] {
         UOp x = X();
         return Case{x.exp().log().sum(), {x}};
       }},
      {"exp2_log2",
       [] {
         UOp x = X();
         return Case{x.exp2().log2().sum(), {x}};
       }},
      {"sin_cos_tan",
       [] {
         UOp x = X();
         return Case{(x.sin() + x.cos() + x.tan()).sum(), {x}};
       }},
      {"sqrt_rsqrt",
       [] {
         UOp x = X();
         return Case{(x.sqrt() + x.rsqrt()).sum(), {x}};
       }},
      {"pow_var",
       [] {
         UOp x = X(), y = Y();
         return Case{x.pow(y).sum(), {x, y}};
       }},
      {"pow_const",
       [] {
         UOp x = X();
         return Case{x.pow(3).sum(), {x}};
       }},
      {"pow_half",
       [] {
         UOp x = X();
         return Case{x.pow(0.5).sum(), {x}};
       }},
      {"rpow",
       [] {
         UOp x = X();
         return Case{x.pow(2, true).sum(), {x}};
       }},
      {"maximum",
       [] {
         UOp x = X(), y = Y();
         return Case{x.maximum(y).sum(), {x, y}};
       }},
      {"minimum",
       [] {
         UOp x = X(), y = Y();
         return Case{x.minimum(y).sum(), {x, y}};
       }},
      {"relu",
       [] {
         UOp x = X();
         return Case{x.relu().sum(), {x}};
       }},
      {"sigmoid",
       [] {
         UOp x = X();
         return Case{x.sigmoid().sum(), {x}};
       }},
      {"tanh",
       [] {
         UOp x = X();
         return Case{x.tanh().sum(), {x}};
       }},
      {"gelu",
       [] {
         UOp x = X();
         return Case{x.gelu().sum(), {x}};
       }},
      {"silu",
       [] {
         UOp x = X();
         return Case{x.silu().sum(), {x}};
       }},
      {"leaky_relu",
       [] {
         UOp x = X();
         return Case{x.leaky_relu(0.1).sum(), {x}};
       }},
      {"abs",
       [] {
         UOp x = X();
         return Case{x.abs().sum(), {x}};
       }},
      {"trunc_floor",
       [] {
         UOp x = X();
         return Case{(x.trunc() + x.floor()).sum(), {x}};
       }},
      {"where",
       [] {
         UOp x = X(), y = Y();
         return Case{(x > 0).where(x, y * 2).sum(), {x, y}};
       }},
      {"cmp_no_grad",
       [] {
         UOp x = X(), y = Y();
         return Case{(x < y).float_().sum() + x.sum(), {x, y}};
       }},
      {"sum_axis",
       [] {
         UOp x = X();
         return Case{x.sum(1), {x}, P(9, dtypes::float32, {2})};
       }},
      {"sum_keepdim",
       [] {
         UOp x = X();
         return Case{(x.sum(0, true) * x).sum(), {x}};
       }},
      {"max_reduce",
       [] {
         UOp x = X();
         return Case{x.max(1).sum(), {x}};
       }},
      {"max_all",
       [] {
         UOp x = X();
         return Case{x.max(), {x}};
       }},
      {"min_reduce",
       [] {
         UOp x = X();
         return Case{x.min(0).sum(), {x}};
       }},
      {"prod",
       [] {
         UOp x = X();
         return Case{x.prod(1).sum(), {x}};
       }},
      {"prod_all",
       [] {
         UOp x = X();
         return Case{x.prod(), {x}};
       }},
      {"mean_var_std",
       [] {
         UOp x = X();
         return Case{x.mean() + x.var() + x.std(1).sum(), {x}};
       }},
      {"matmul",
       [] {
         UOp x = X(), w = W();
         return Case{x.matmul(w).sum(), {x, w}};
       }},
      {"matmul_relu_sum",
       [] {
         UOp x = X(), w = W();
         return Case{x.matmul(w).relu().sum(), {x, w}};
       }},
      {"dot_vec",
       [] {
         UOp x = X(), v = V();
         return Case{x.dot(v).sum(), {x, v}};
       }},
      {"broadcast_vec",
       [] {
         UOp x = X(), v = V();
         return Case{(x * v).sum(), {x, v}};
       }},
      {"broadcast_scalar",
       [] {
         UOp x = X(), s = S();
         return Case{(x * s).sum(), {x, s}};
       }},
      {"reshape_permute",
       [] {
         UOp x = X(), y = Y();
         return Case{(x.reshape({3, 2}).permute({1, 0}) * y).sum(), {x, y}};
       }},
      {"expand",
       [] {
         UOp v = V(), x = X();
         return Case{(v.reshape({1, 3}).expand(Shape{2, 3}) * x).sum(), {v, x}};
       }},
      {"flip",
       [] {
         UOp x = X(), y = Y();
         return Case{(x.flip({1}) * y).sum(), {x, y}};
       }},
      {"pad",
       [] {
         UOp x = X();
         return Case{x.pad({OptPair(1, 0), OptPair(0, 2)}).exp().sum(), {x}};
       }},
      {"shrink",
       [] {
         UOp x = X();
         return Case{x.shrink({OptPair(0, 1), OptPair(1, 3)}).exp().sum(), {x}};
       }},
      {"getitem",
       [] {
         UOp x = X();
         return Case{(x.getitem({Index(1), Index::slice(1)}) * 3).sum(), {x}};
       }},
      {"cat",
       [] {
         UOp x = X(), y = Y();
         return Case{x.cat({y}, 1).exp().sum(), {x, y}};
       }},
      {"stack",
       [] {
         UOp x = X(), y = Y();
         return Case{UOp::stack({x, y}).exp().sum(), {x, y}};
       }},
      {"cast_half",
       [] {
         UOp x = X();
         return Case{x.cast(dtypes::float16).cast(dtypes::float32).sum(), {x}};
       }},
      {"half_input",
       [] {
         UOp h = H();
         return Case{h.float_().sum(), {h}};
       }},
      {"contiguous",
       [] {
         UOp x = X();
         return Case{x.contiguous().exp().sum(), {x}};
       }},
      {"contiguous_backward",
       [] {
         UOp x = X();
         return Case{x.contiguous_backward().exp().sum(), {x}};
       }},
      {"detach",
       [] {
         UOp x = X();
         return Case{(x * x.detach()).sum(), {x}};
       }},
      {"softmax",
       [] {
         UOp x = X(), y = Y();
         return Case{x.softmax().mul(y).sum(), {x, y}};
       }},
      {"log_softmax",
       [] {
         UOp x = X();
         return Case{x.log_softmax(0).sum(), {x}};
       }},
      {"logsumexp",
       [] {
         UOp x = X();
         return Case{x.logsumexp(1).sum(), {x}};
       }},
      {"layernorm",
       [] {
         UOp x = X(), y = Y();
         return Case{x.layernorm().mul(y).sum(), {x, y}};
       }},
      {"cross_entropy",
       [] {
         UOp x = X();
         return Case{x.sparse_categorical_crossentropy(UOp::arange(2).cast(dtypes::int32)), {x}};
       }},
      {"conv2d",
       [] {
         UOp img = IMG(), k = K();
         return Case{img.conv2d(k, std::nullopt, 1, 1, 1, 1).relu().sum(), {img, k}};
       }},
      {"max_pool2d",
       [] {
         UOp img = IMG();
         return Case{img.max_pool2d().sum(), {img}};
       }},
      {"avg_pool2d",
       [] {
         UOp img = IMG();
         return Case{img.avg_pool2d({2, 2}, IntTuple(1)).sum(), {img}};
       }},
      {"unused_target",
       [] {
         UOp x = X();
         return Case{x.sum(), {x, Y()}};
       }},
      {"two_paths",
       [] {
         UOp x = X();
         return Case{(x.exp() * x.sin() + x).sum(), {x}};
       }},
      {"err_int",
       [] {
         UOp i = P(8, dtypes::int32, {2, 3});
         return Case{i.sum(), {i}};
       }},
      {"err_not_scalar",
       [] {
         UOp x = X();
         return Case{x * 2, {x}};
       }},
      {"fn_mlp",
       [] {
         UOp x = D(0, {2, 3}), w = D(1, {3, 4}), b = D(2, {4});
         return Case{F("mlp", mlp, {x, w, b})[0].sum(), {x, w, b}};
       }},
      {"fn_mlp_some_targets",
       [] {
         UOp x = D(0, {2, 3}), b = D(2, {4});
         return Case{F("mlp", mlp, {x, D(1, {3, 4}), b})[0].sum(), {x, b}};
       }},
      {"fn_two_outputs",
       [] {
         UOp a = D(0, {2, 3}), b = D(1, {2, 3});
         auto o = F("two_outs", two_outs, {a, b});
         return Case{(o[0] * o[1]).sum(), {a, b}};
       }},
      {"fn_unused_output",
       [] {
         UOp a = D(0, {2, 3}), b = D(1, {2, 3});
         return Case{F("two_outs", two_outs, {a, b})[1].sum(), {a, b}};
       }},
      {"fn_twice",
       [] {
         UOp x = D(0, {2, 3}), w = D(1, {3, 3});
         return Case{F("square", square, {F("square", square, {x, w})[0], w})[0].sum(), {x, w}};
       }},
      {"fn_same_arg_twice",
       [] {
         UOp a = D(0, {2, 3});
         return Case{F("two_outs", two_outs, {a, a})[0].sum(), {a}};
       }},
      {"fn_precompile",
       [] {
         UOp x = D(0, {2, 3}), w = D(1, {3, 4}), b = D(2, {4});
         return Case{F("mlp", mlp, {x, w, b}, precompiled())[0].sum(), {x, w, b}};
       }},
      {"fn_precompile_two_outputs",
       [] {
         UOp a = D(0, {2, 3}), b = D(1, {2, 3});
         auto o = F("two_outs", two_outs, {a, b}, precompiled());
         return Case{(o[0] + o[1]).sum(), {a, b}};
       }},
      {"fn_precompile_backward",
       [] {
         UOp x = D(0, {2, 3}), w = D(1, {3, 4}), b = D(2, {4});
         return Case{F("mlp", mlp, {x, w, b}, precompiled_backward())[0].sum(), {x, w, b}};
       }},
      {"fn_implicit_buffer",
       [] {
         UOp x = D(0, {2, 3});
         return Case{F("with_buf", with_buf, {x}, implicit())[0].sum(), {x}};
       }},
      {"fn_err_call_no_grad_fxn",
       [] {
         UOp x = D(0, {2, 3});
         UOp c = uop_call(UOp::sink({x.store(x)}), std::span<const UOp>(&x, 1));
         return Case{x.after(c).sum(), {x}};
       }},
      {"fn_err_implicit",
       [] {
         UOp x = D(0, {2, 3});
         return Case{F("with_buf", with_buf, {x})[0].sum(), {x}};
       }},
  };
  return t;
}

}  // namespace

TEST(GradientGoldens, EveryCaseMatchesTheReference) {
  auto goldens = load();
  ASSERT_EQ(goldens.size(), table().size()) << "every golden case needs a C++ twin";
  int matched = 0, errors = 0;
  for (const Golden& g : goldens) {
    SCOPED_TRACE(g.name);
    auto it = table().find(g.name);
    ASSERT_NE(it, table().end()) << "no C++ twin";
    if (!g.error.empty()) {
      EXPECT_THROW(
          {
            Case c = it->second();
            gradient(c.out, c.targets, c.grad);
          },
          Error)
          << "the reference raised " << g.error;
      errors++;
      continue;
    }
    Case c = it->second();
    std::vector<UOp> grads = gradient(c.out, c.targets, c.grad);
    std::vector<std::string> got = encode_graph(UOp::sink(std::span<const UOp>(grads)));
    EXPECT_EQ(got, g.graph);
    matched += got == g.graph;
  }
  EXPECT_EQ(matched + errors, int(goldens.size()));
}
