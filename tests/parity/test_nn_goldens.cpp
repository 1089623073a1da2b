// tg::nn layers against the reference (tests/data/nn_goldens.txt, gen_nn_goldens.py): created right after
// Tensor::manual_seed(1337), every parameter has the reference's exact float32 bits (or the same FNV-1a hash of its
// bytes for big ones), and a forward pass gives its outputs within 1e-5; BatchNorm under TRAINING=1 updates the running
// statistics like the reference; the beautiful_mnist model's initial weights are bit-identical.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>

#include "lib/nn/nn.h"
#include "tests/support/devices.h"
#include "tests/support/golden_file.h"

using namespace tg;

namespace {

struct Golden {
  std::string name;
  std::vector<std::pair<std::string, std::vector<std::string>>> params;  // "param"/"phash" lines: name -> fields
  std::vector<std::string> param_kind;
  std::map<std::string, std::vector<double>> outs;
  std::string file_hex;
};

std::vector<Golden> load() {
  test::GoldenFile f(TG_TEST_DATA "/nn_goldens.txt");
  std::vector<Golden> g;
  while (f.next()) {
    std::vector<std::string> w = f.words();
    if (w.size() < 2) f.fail("expected: <kind> <name> ...");
    if (f.is("case")) {
      g.push_back({w[1], {}, {}, {}});
      continue;
    }
    if (g.empty()) f.fail("a record before the first case");
    if (f.is("param") || f.is("phash")) {
      g.back().params.emplace_back(w[1], std::vector<std::string>(w.begin() + 2, w.end()));
      g.back().param_kind.push_back(f.key());
    } else if (f.is("file")) {  // file <name> <hex>
      g.back().file_hex = w.size() > 2 ? w[2] : "";
    } else if (f.is("out")) {
      g.back().outs[w[1]] = f.numbers(2);
    }
  }
  return g;
}

uint64_t fnv(const std::vector<uint8_t>& b) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t x : b) h = (h ^ x) * 0x100000001b3ull;
  return h;
}

Tensor inp(const Shape& shape) {
  pyint n = 1;
  for (const sint& s : shape) n *= s.i();
  return ((Tensor::arange(PyConst(n)).float_().reshape(shape) / (double)n - 0.5).sin() * 2);
}

using Params = std::vector<std::pair<std::string, Tensor>>;
struct Built {
  Params params;
  std::map<std::string, Tensor> outs;
};

void check_params(const Golden& g, const Params& ps) {
  ASSERT_EQ(ps.size(), g.params.size()) << g.name;
  for (size_t i = 0; i < ps.size(); i++) {
    const auto& [name, fields] = g.params[i];
    SCOPED_TRACE(g.name + " " + name);
    EXPECT_EQ(ps[i].first, name);
    const Tensor& t = ps[i].second;
    if (g.param_kind[i] == "phash") {
      std::vector<uint8_t> bytes = t.data();
      EXPECT_EQ(std::to_string(bytes.size() / 4), fields[0]);
      char h[32];
      std::snprintf(h, sizeof h, "%016llx", (unsigned long long)fnv(bytes));
      EXPECT_EQ(std::string(h), fields[1]) << "parameter bytes differ from the reference's";
    } else if (t.dtype() == dtypes::float32) {
      std::vector<float> v = t.to_vector<float>();
      ASSERT_EQ(v.size(), fields.size());
      for (size_t k = 0; k < v.size(); k++) {
        uint32_t bits;
        std::memcpy(&bits, &v[k], 4);
        char h[16];
        std::snprintf(h, sizeof h, "%08x", bits);
        EXPECT_EQ(std::string(h), fields[k]) << "element " << k;
      }
    } else {
      std::vector<int64_t> v = t.cast(dtypes::int64).to_vector<int64_t>();
      ASSERT_EQ(v.size(), fields.size());
      for (size_t k = 0; k < v.size(); k++) EXPECT_EQ(std::to_string(v[k]), fields[k]);
    }
  }
}

void check_out(const Golden& g, const std::string& name, const Tensor& t) {
  SCOPED_TRACE(g.name + " out " + name);
  auto it = g.outs.find(name);
  ASSERT_NE(it, g.outs.end());
  std::vector<float> v = t.cast(dtypes::float32).to_vector<float>();
  ASSERT_EQ(v.size(), it->second.size());
  for (size_t k = 0; k < v.size(); k++) EXPECT_NEAR(v[k], it->second[k], 1e-5 * std::max(1.0, std::abs(it->second[k])));
}

// the layers' state dicts must list their tensors in the reference's order
template <class L>
Params wb(const L& l) {
  return l.state_dict();
}
#define norm_params wb
#define bn_params wb

const std::map<std::string, std::function<Built()>>& table() {
  static const std::map<std::string, std::function<Built()>> t = {
      {"linear", [] { nn::Linear m(5, 3); return Built{wb(m), {{"y", m(inp({2, 5}))}}}; }},
      {"linear_nobias", [] { nn::Linear m(4, 2, false); return Built{wb(m), {{"y", m(inp({3, 4}))}}}; }},
      {"conv2d", [] { nn::Conv2d m(2, 4, 3, 1, 1); return Built{wb(m), {{"y", m(inp({1, 2, 5, 5}))}}}; }},
      {"conv2d_stride_groups",
       [] { nn::Conv2d m(4, 4, 3, 2, 0, 1, 2, false); return Built{wb(m), {{"y", m(inp({1, 4, 6, 6}))}}}; }},
      {"conv2d_same", [] { nn::Conv2d m(2, 3, {3, 5}, 1, "same"); return Built{wb(m), {{"y", m(inp({1, 2, 6, 7}))}}}; }},
      {"conv1d", [] { nn::Conv2d m = nn::Conv1d(2, 3, 3); return Built{wb(m), {{"y", m(inp({2, 2, 7}))}}}; }},
      {"conv_transpose2d",
       [] { nn::ConvTranspose2d m(2, 3, 3, 2, 1, 1); return Built{wb(m), {{"y", m(inp({1, 2, 4, 4}))}}}; }},
      {"batchnorm", [] { nn::BatchNorm m(3); return Built{bn_params(m), {{"y", m(inp({2, 3, 4, 4}))}}}; }},
      {"groupnorm", [] { nn::GroupNorm m(2, 4); return Built{norm_params(m), {{"y", m(inp({2, 4, 3, 3}))}}}; }},
      {"instancenorm", [] { nn::InstanceNorm m(3); return Built{norm_params(m), {{"y", m(inp({2, 3, 4, 4}))}}}; }},
      {"layernorm", [] { nn::LayerNorm m(6); return Built{norm_params(m), {{"y", m(inp({2, 3, 6}))}}}; }},
      {"layernorm_2d_shape",
       [] { nn::LayerNorm m(Shape{3, 6}); return Built{norm_params(m), {{"y", m(inp({2, 3, 6}))}}}; }},
      {"layernorm2d", [] { nn::LayerNorm2d m(3); return Built{norm_params(m), {{"y", m(inp({1, 3, 4, 4}))}}}; }},
      {"rmsnorm", [] { nn::RMSNorm m(6); return Built{wb(m), {{"y", m(inp({2, 6}))}}}; }},
      {"embedding",
       [] {
         nn::Embedding m(10, 4);
         Tensor idx = (Tensor::arange(6).reshape({2, 3}) * 7) % 10;
         return Built{wb(m), {{"y", m(idx)}}};
       }},
      {"lstmcell",
       [] {
         nn::LSTMCell m(3, 5);
         auto hc = m(inp({2, 3}));
         return Built{wb(m), {{"y", m(inp({2, 3}), hc).first}}};
       }},
  };
  return t;
}

}  // namespace

TEST(NnGoldens, LayersInitAndForwardLikeTheReference) {
  int n = 0;
  for (const Golden& g : load()) {
    auto it = table().find(g.name);
    if (it == table().end()) continue;
    Tensor::manual_seed(1337);
    Built b = it->second();
    check_params(g, b.params);
    for (auto& [k, t] : b.outs) check_out(g, k, t);
    n++;
  }
  EXPECT_EQ(n, (int)table().size());
}

TEST(NnGoldens, BatchNormTrainingUpdatesRunningStats) {
  for (const Golden& g : load()) {
    if (g.name != "batchnorm_train") continue;
    Tensor::manual_seed(1337);
    nn::BatchNorm bn(3);
    Context c({{"TRAINING", 1}});
    Tensor y = bn(inp({2, 3, 4, 4})).realize();
    check_out(g, "y", y);
    check_out(g, "running_mean", *bn.running_mean);
    check_out(g, "running_var", *bn.running_var);
    check_out(g, "num_batches_tracked", bn.num_batches_tracked);
    return;
  }
  FAIL() << "no batchnorm_train golden";
}

TEST(NnGoldens, BeautifulMnistInitialWeightsAreBitIdentical) {
  for (const Golden& g : load()) {
    if (g.name != "beautiful_mnist_init") continue;
    Tensor::manual_seed(1337);
    nn::Conv2d c1(1, 32, 5), c2(32, 32, 5);
    nn::BatchNorm b1(32);
    nn::Conv2d c3(32, 64, 3), c4(64, 64, 3);
    nn::BatchNorm b2(64);
    nn::Linear l(576, 10);
    Params all;
    auto add = [&](int i, const Params& ps) {
      for (auto& [k, t] : ps) all.emplace_back(std::to_string(i) + "." + k, t);
    };
    add(0, wb(c1)), add(1, wb(c2)), add(2, bn_params(b1)), add(3, wb(c3)), add(4, wb(c4)), add(5, bn_params(b2)),
        add(6, wb(l));
    check_params(g, all);
    return;
  }
  FAIL() << "no beautiful_mnist_init golden";
}

TEST(NnGoldens, SafeSaveWritesTheReferencesFileAndLoadsBack) {
  for (const Golden& g : load()) {
    if (g.name != "linear_safetensors") continue;
    Tensor::manual_seed(1337);
    nn::Linear l(5, 3);
    std::string path = ::testing::TempDir() + "tg_linear.safetensors";
    safe_save(l.state_dict(), path);
    std::ifstream f(path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::string hex;
    char h[3];
    for (uint8_t b : bytes) std::snprintf(h, sizeof h, "%02x", b), hex += h;
    EXPECT_EQ(hex, g.file_hex);
    // a fresh layer (other seed) loads the saved weights
    Tensor::manual_seed(7);
    nn::Linear other(5, 3);
    EXPECT_NE(other.weight.to_vector<float>(), l.weight.to_vector<float>());
    std::vector<Tensor> loaded = load_state_dict(other.state_dict(), safe_load(path));
    EXPECT_EQ(loaded.size(), 2u);
    EXPECT_EQ(other.weight.to_vector<float>(), l.weight.to_vector<float>());
    EXPECT_EQ(other.bias->to_vector<float>(), l.bias->to_vector<float>());
    std::remove(path.c_str());
    return;
  }
  FAIL() << "no linear_safetensors golden";
}

TEST(Nn, LoadStateDictErrorsNameTheTensor) {
  nn::Linear l(5, 3);
  try {
    load_state_dict(l.state_dict(), StateDict{{"weight", Tensor::zeros({3, 5})}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("`bias` is not in the state dict"), std::string::npos) << e.what();
  }
  EXPECT_EQ(load_state_dict(l.state_dict(), StateDict{{"weight", Tensor::zeros({3, 5})}}, false).size(), 1u);
  try {
    load_state_dict(l.state_dict(), StateDict{{"weight", Tensor::zeros({5, 3})}, {"bias", Tensor::zeros({3})}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Shape mismatch in layer `weight`: Expected shape (3, 5), but found (5, 3)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(safe_load("/nonexistent.safetensors"), Error);
}

TEST(Nn, BadArgumentsAreErrors) {
  EXPECT_THROW(nn::Conv2d(3, 4, 3, 1, "valid"), Error);
  EXPECT_THROW(nn::Conv2d(3, 4, 3, 2, "same"), Error);
  EXPECT_THROW(nn::Conv2d(3, 4, 3, 1, 0, 1, 2), Error);  // 3 channels in 2 groups
  nn::LayerNorm ln(6);
  EXPECT_THROW(ln(Tensor::ones({2, 5})), Error);
  nn::Embedding e(10, 4);
  EXPECT_THROW(e(Tensor::ones({2})), Error);  // float indices
}
