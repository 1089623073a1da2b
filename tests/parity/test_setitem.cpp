// Tensor::setitem (tensor.py __setitem__) against the reference: the programs of gen_setitem_goldens.py, each run on
// CPU and on the interpreter, must leave the same values in the tensors or raise the same error.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <sstream>

#include "lib/tensor.h"
#include "tests/support/devices.h"
#include "tests/support/golden_file.h"

using namespace tg;

namespace {

struct Golden {
  std::vector<std::string> vals;  // "float 3 4 : 1 2 ..." per tensor
  std::string error;
};

std::map<std::string, Golden> load() {
  test::GoldenFile f(std::string(TG_TEST_DATA) + "/setitem_goldens.txt");
  std::map<std::string, Golden> out;
  std::string cur;
  while (f.next()) {
    if (f.is("case"))
      cur = f.rest(), out[cur];
    else if (f.is("vals"))
      out[cur].vals.push_back(f.rest());
    else if (f.is("error"))  // error <type>: <message>
      out[cur].error = f.rest().substr(f.rest().find(": ") + 2);
  }
  return out;
}

// the reference's data(*shape, dtype): Tensor([1..n], dtype).reshape(shape), realized unless asked not to
Tensor data(const Shape& shape, DType dt = dtypes::float32, bool realize = true) {
  int64_t n = 1;
  for (const sint& s : shape) n *= s.i();
  std::vector<double> v;
  for (int64_t i = 0; i < n; i++) v.push_back((double)(i + 1));
  Tensor t = Tensor::from_vector(v, dt).reshape(shape);
  return realize ? t.realize() : t;
}
Tensor ints(const std::vector<int32_t>& v) { return Tensor::from_vector(v); }
Tensor floats(const std::vector<float>& v) { return Tensor::from_vector(v); }
Index S(std::optional<sint> a = std::nullopt, std::optional<sint> b = std::nullopt,
        std::optional<sint> c = std::nullopt) {
  return Index::slice(a, b, c);
}
Index I(const Tensor& t) { return Index(t.uop()); }

using Program = std::function<std::vector<Tensor>()>;

// the same programs as gen_setitem_goldens.py, in its order
std::vector<std::pair<std::string, Program>> programs() {
  return {
      {"realized_row",
       [] {
         Tensor t = data({3, 4});
         t.setitem(1, 5.0);
         return std::vector{t};
       }},
      {"realized_slice_tensor",
       [] {
         Tensor t = data({3, 4});
         t.setitem({S(), S(1, 3)}, floats({10, 11, 12, 13, 14, 15}).reshape({3, 2}));
         return std::vector{t};
       }},
      {"realized_step_flip_broadcast",
       [] {
         Tensor t = data({4, 4});
         t.setitem({S(std::nullopt, std::nullopt, 2), S(std::nullopt, std::nullopt, -1)}, floats({-1, -2, -3, -4}));
         return std::vector{t};
       }},
      {"realized_int_scalar",
       [] {
         Tensor t = data({3, 4}, dtypes::int32);
         t.setitem({Index(0), Index(2)}, 7);
         return std::vector{t};
       }},
      {"realized_negative_index",
       [] {
         Tensor t = data({3, 4});
         t.setitem({Index(-1), Index(-2)}, 3.5);
         return std::vector{t};
       }},
      {"realized_step3",
       [] {
         Tensor t = data({7});
         t.setitem({S(1, std::nullopt, 3)}, floats({10, 20}));
         return std::vector{t};
       }},
      {"realized_ellipsis",
       [] {
         Tensor t = data({2, 3, 2});
         t.setitem({Ellipsis, Index(1)}, floats({0.5, 1.5, 2.5}).reshape({1, 3}));
         return std::vector{t};
       }},
      {"realized_view_seen_by_other",
       [] {
         Tensor t = data({2, 3});
         Tensor u = t.reshape({3, 2});
         t.setitem({Index(0), S(1)}, floats({8, 9}));
         return std::vector{t, u};
       }},
      {"unrealized_float",
       [] {
         Tensor t = data({3, 4}) * 2;
         t.setitem({S(1), Index(0)}, floats({-1, -2}));
         return std::vector{t};
       }},
      {"unrealized_int_basic",
       [] {
         Tensor t = data({3, 4}, dtypes::int32) * 3;
         t.setitem(2, -1);
         return std::vector{t};
       }},
      {"unrealized_float_step",
       [] {
         Tensor t = data({5}, dtypes::float32, false) + 0.5;
         t.setitem({S(std::nullopt, std::nullopt, -2)}, 0.0);
         return std::vector{t};
       }},
      {"advanced_rows",
       [] {
         Tensor t = data({4, 3});
         t.setitem(ints({0, 2}), floats({7, 8, 9, 4, 5, 6}).reshape({2, 3}));
         return std::vector{t};
       }},
      {"advanced_with_slice",
       [] {
         Tensor t = data({4, 3});
         t.setitem({I(ints({1, 3})), S(1)}, 9.0);
         return std::vector{t};
       }},
      {"advanced_two_tensors",
       [] {
         Tensor t = data({3, 3});
         t.setitem({I(ints({0, 2})), I(ints({1, 0}))}, floats({50, 60}));
         return std::vector{t};
       }},
      {"advanced_duplicates_last_wins",
       [] {
         Tensor t = data({3, 2});
         t.setitem(ints({1, 1}), floats({1, 2, 3, 4}).reshape({2, 2}));
         return std::vector{t};
       }},
      {"advanced_unrealized_float",
       [] {
         Tensor t = data({4, 2}) - 1;
         t.setitem(ints({2, 0}), floats({100, 200}).reshape({2, 1}));
         return std::vector{t};
       }},
      {"advanced_int_realized",
       [] {
         Tensor t = data({2, 4}, dtypes::int32);
         t.setitem({S(), I(ints({3, -4}))}, 0);
         return std::vector{t};
       }},
      {"advanced_nonconsecutive",
       [] {
         Tensor t = data({2, 3, 4});
         t.setitem({I(ints({0, 1})), S(), I(ints({2, 3}))}, floats({-1, -2, -3, -4, -5, -6}).reshape({2, 3}));
         return std::vector{t};
       }},
      {"advanced_permuted",
       [] {
         Tensor t = data({2, 3, 2, 2});
         t.setitem({S(), I(ints({0, 2})), S(), I(ints({1, 0}))}, data({2, 2, 2}, dtypes::float32, false) * -1);
         return std::vector{t};
       }},
      {"advanced_broadcast_index",
       [] {
         Tensor t = data({3, 4});
         t.setitem({I(ints({0, 2}).reshape({2, 1})), I(ints({1, 3}))}, 0.5);
         return std::vector{t};
       }},
      {"none_index_unrealized",
       [] {
         Tensor t = data({2, 3}) + 0;
         t.setitem({Index(std::nullopt), Index(1), S(std::nullopt, std::nullopt, 2)}, floats({7, 8}));
         return std::vector{t};
       }},
      // t[1:3] += 1: __getitem__, __iadd__ (assign into the view), then __setitem__ of that AFTER
      {"iadd_view",
       [] {
         Tensor t = data({4, 2});
         std::vector<Index> idx{S(1, 3)};
         Tensor v = t.getitem(idx);
         v += 1;
         t.setitem(idx, v);
         return std::vector{t};
       }},
      {"isub_view_unrealized",
       [] {
         Tensor t = data({3, 2}) * 1;
         Tensor v = t[0];
         v -= 10;
         t.setitem(0, v);
         return std::vector{t};
       }},
      {"inplace_ops",
       [] {
         Tensor t = data({3});
         Tensor u = t;
         t += 1;
         t *= 2;
         t -= floats({1, 1, 1});
         t /= 4;
         return std::vector{t, u};
       }},
      {"err_weak",
       [] {
         Tensor t(2.0);
         t.setitem({Index(std::nullopt)}, 1.0);
         return std::vector{t};
       }},
      {"err_dtype",
       [] {
         Tensor t = data({3});
         t.setitem(0, ints({1}).reshape({}));
         return std::vector{t};
       }},
      {"err_other_uses",
       [] {
         Tensor t = data({3}) * 2;
         Tensor u = t + 1;
         t.setitem(0, 5.0);
         return std::vector{t, u};
       }},
  };
}

void check(const Tensor& t, const std::string& want, const std::string& what) {
  std::istringstream is(want);
  std::string dt;
  is >> dt;
  EXPECT_EQ(t.dtype().repr(), "dtypes." + dt) << what;
  Shape shape;
  for (std::string tok; is >> tok && tok != ":";) shape.push_back(sint((pyint)std::stoll(tok)));
  EXPECT_TRUE(shape_eq(t.shape(), shape)) << what << ": shape " << t.repr();
  std::vector<double> w;
  for (double x; is >> x;) w.push_back(x);
  std::vector<double> got = t.cast(dtypes::float64).to_vector<double>();
  ASSERT_EQ(got.size(), w.size()) << what;
  for (size_t i = 0; i < w.size(); i++)
    EXPECT_NEAR(got[i], w[i], 1e-6 * std::max(1.0, std::abs(w[i]))) << what << "[" << i << "]";
}

class Setitem : public ::testing::TestWithParam<const char*> {};

TEST_P(Setitem, ProgramsMatchReference) {
  const char* dev = GetParam();
  const char* old = getenv("DEV");
  std::string saved = old ? old : "";
  setenv("DEV", dev, 1);
  std::map<std::string, Golden> goldens = load();
  std::vector<std::pair<std::string, Program>> progs = programs();
  EXPECT_EQ(progs.size(), goldens.size());
  for (const auto& [name, prog] : progs) {
    SCOPED_TRACE(name + " on " + dev);
    auto it = goldens.find(name);
    ASSERT_NE(it, goldens.end()) << "no golden for " << name;
    const Golden& g = it->second;
    if (!g.error.empty()) {
      try {
        (void)prog();
        ADD_FAILURE() << name << ": expected the error '" << g.error << "'";
      } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), g.error);
      }
      continue;
    }
    std::vector<Tensor> ts = prog();
    ASSERT_EQ(ts.size(), g.vals.size());
    for (size_t i = 0; i < ts.size(); i++) check(ts[i], g.vals[i], name + " tensor " + std::to_string(i));
  }
  if (old)
    setenv("DEV", saved.c_str(), 1);
  else
    unsetenv("DEV");
}

INSTANTIATE_TEST_SUITE_P(Devices, Setitem, ::testing::Values("CPU", "INTERP"));

}  // namespace
