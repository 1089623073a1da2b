// FUNCTIONs run end to end against the reference: every case of tests/data/function_goldens.txt
// (gen_function_goldens.py, tinygrad.function.function on CPU) is built with lib/function.h's call_function on the
// same float32 inputs, differentiated through the FUNCTION with tg::gradient, realized on CPU and compared.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "lib/function.h"
#include "lib/mixin/gradient.h"
#include "lib/tensor.h"
#include "tests/support/devices.h"
#include "tests/support/golden_file.h"

using namespace tg;

namespace {

struct Golden {
  std::vector<std::pair<Shape, std::vector<float>>> inputs;
  std::vector<std::vector<double>> outputs;
};

std::map<std::string, Golden> load() {
  test::GoldenFile f(TG_TEST_DATA "/function_goldens.txt");
  std::map<std::string, Golden> out;
  std::string cur;
  while (f.next()) {
    std::vector<std::string> w = f.words();
    if (f.is("case")) {  // case <name> ...
      cur = w.at(1);
      out[cur];
    } else if (f.is("in")) {  // in <shape...> : <values...>
      size_t colon = std::find(w.begin(), w.end(), ":") - w.begin();
      Shape shape;
      for (size_t i = 1; i < colon; i++) shape.push_back(sint((pyint)std::stoll(w[i])));
      std::vector<float> v;
      for (double d : f.numbers(colon + 1)) v.push_back((float)d);
      out[cur].inputs.emplace_back(shape, v);
    } else if (f.is("out")) {
      out[cur].outputs.push_back(f.numbers(1));
    }
  }
  return out;
}

std::vector<Tensor> wrap(const std::vector<UOp>& us) {
  std::vector<Tensor> r;
  for (const UOp& u : us) r.push_back(Tensor::wrap(u));
  return r;
}
std::vector<UOp> uops(const std::vector<Tensor>& ts) {
  std::vector<UOp> r;
  for (const Tensor& t : ts) r.push_back(t.uop());
  return r;
}
// tinygrad.function.function on Tensors: the body runs on the arguments, call_function makes the FUNCTION
using Body = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
std::vector<Tensor> F(const std::string& name, const Body& body, const std::vector<Tensor>& args,
                      FunctionOpts opts = {}) {
  opts.name = name;
  return wrap(call_function(uops(args), uops(body(args)), opts));
}
std::vector<Tensor> grads(const Tensor& loss, const std::vector<Tensor>& targets) {
  return wrap(gradient(loss.uop(), uops(targets)));
}
std::vector<Tensor> mlp(const std::vector<Tensor>& a) { return {(a[0].matmul(a[1]) + a[2]).relu()}; }
std::vector<Tensor> two_outs(const std::vector<Tensor>& a) { return {a[0] * a[1], (a[0] + a[1]).exp()}; }
std::vector<Tensor> square(const std::vector<Tensor>& a) { return {a[0].matmul(a[1]).tanh()}; }

std::vector<Tensor> c_mlp(const std::vector<Tensor>& in, FunctionOpts opts) {
  Tensor out = F("mlp", mlp, in, opts)[0];
  std::vector<Tensor> r{out};
  for (const Tensor& g : grads(out.sum(), in)) r.push_back(g);
  return r;
}
FunctionOpts pre(bool fwd, bool bwd) {
  FunctionOpts o;
  o.precompile = fwd, o.precompile_backward = bwd;
  return o;
}
using Make = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
const std::map<std::string, Make>& table() {
  static const std::map<std::string, Make> t = {
      {"mlp", [](const std::vector<Tensor>& in) { return c_mlp(in, {}); }},
      {"mlp_precompile", [](const std::vector<Tensor>& in) { return c_mlp(in, pre(true, false)); }},
      {"mlp_precompile_backward", [](const std::vector<Tensor>& in) { return c_mlp(in, pre(false, true)); }},
      {"two_outputs",
       [](const std::vector<Tensor>& in) {
         auto o = F("two_outs", two_outs, in);
         std::vector<Tensor> r{o[0], o[1]};
         for (const Tensor& g : grads((o[0] * o[1]).sum(), in)) r.push_back(g);
         return r;
       }},
      {"twice",
       [](const std::vector<Tensor>& in) {
         Tensor out = F("square", square, {F("square", square, in)[0], in[1]})[0];
         std::vector<Tensor> r{out};
         for (const Tensor& g : grads(out.sum(), in)) r.push_back(g);
         return r;
       }},
  };
  return t;
}

}  // namespace

TEST(Function, ValuesAndGradientsMatchTheReference) {
  auto goldens = load();
  ASSERT_EQ(goldens.size(), table().size()) << "every golden case needs a C++ twin";
  int values = 0, gaps = 0;
  for (const auto& [name, g] : goldens) {
    SCOPED_TRACE(name);
    auto it = table().find(name);
    ASSERT_NE(it, table().end());
    std::vector<Tensor> in;
    for (const auto& [shape, v] : g.inputs)
      in.push_back(Tensor::from_vector(v, dtypes::float32).reshape(shape).contiguous().realize());
    std::vector<Tensor> outs = it->second(in);
    ASSERT_EQ(outs.size(), g.outputs.size());
    // known gap: the Tensor realize path (lib/tensor/callify.cpp) cannot run precompiled FUNCTIONs yet; the graphs
    // themselves are checked by test_gradient_goldens (fn_precompile*). This fails once they run: drop the gap then.
    if (name.find("precompile") != std::string::npos) {
      std::string err;
      try {
        outs[0].realize(std::vector<Tensor>(outs.begin() + 1, outs.end()));
      } catch (const Error& e) {
        err = e.what();
      }
      EXPECT_NE(err.find("precompiled FUNCTIONs are not supported yet"), std::string::npos) << err;
      gaps++;
      continue;
    }
    outs[0].realize(std::vector<Tensor>(outs.begin() + 1, outs.end()));
    for (size_t i = 0; i < outs.size(); i++) {
      std::vector<float> got = outs[i].to_vector<float>();
      ASSERT_EQ(got.size(), g.outputs[i].size()) << "output " << i;
      for (size_t j = 0; j < got.size(); j++, values++)
        EXPECT_NEAR(got[j], g.outputs[i][j], 1e-5 * std::max(1.0, std::abs(g.outputs[i][j])))
            << "output " << i << "[" << j << "]";
    }
  }
  std::printf("[ function ] %zu cases: %d values compared, %d precompiled cases not runnable yet (known gap)\n",
              goldens.size(), values, gaps);
  EXPECT_EQ(gaps, 2);
}
