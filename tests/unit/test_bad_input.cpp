// What the Tensor API does with input a user can get wrong: integer division by zero and INT_MIN // -1 give the
// reference's defined values on every device (never a signal), a tensor larger than the device is an error before
// anything is built or compiled, and an empty argmax is an error.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <functional>

#include "backends/cpu/cpu.h"
#include "backends/interp/interp.h"
#include "lib/device.h"
#include "lib/tensor.h"

using namespace tg;

namespace {

std::vector<int64_t> ints(const Tensor& t) {
  std::vector<int64_t> out;
  for (const PyConst& v : t.tolist_flat()) out.push_back((int64_t)v.as_int());
  return out;
}

struct DivCase {
  DType dt;
  std::vector<int64_t> a, b, floordiv, mod, trunc;
};

// the reference's PYTHON device (helpers.cdiv/cmod: x / 0 = 0, x % 0 = x, results truncated to the dtype), from:
//   for dt, a, b in cases: x, y = Tensor(a, dtype=dt), Tensor(b, dtype=dt)
//     print((x // y).tolist(), (x % y).tolist(), x.div(y, rounding_mode="trunc").tolist())
// run with DEV=PYTHON in tinygrad a9069c17. Its CPU device dies of SIGFPE on the first two rows.
const std::vector<DivCase>& div_cases() {
  static const std::vector<DivCase> cases = {
      {dtypes::int32, {7, -7, 0, 5}, {0, 0, 0, 0}, {0, -1, 0, 0}, {7, -7, 0, 5}, {0, 0, 0, 0}},
      {dtypes::int32,
       {INT32_MIN, 5, INT32_MIN, 9},
       {-1, -1, 1, -1},
       {INT32_MIN, -5, INT32_MIN, -9},
       {0, 0, 0, 0},
       {INT32_MIN, -5, INT32_MIN, -9}},
      {dtypes::int8, {-128, 100, -128, 3}, {-1, 0, 2, -1}, {-128, 0, -64, -3}, {0, 100, 0, 0}, {-128, 0, -64, -3}},
      {dtypes::int64, {INT64_MIN, 7, 1, -5}, {-1, 0, 0, 2}, {INT64_MIN, 0, 0, -3}, {0, 7, 1, 1}, {INT64_MIN, 0, 0, -2}},
      {dtypes::uint32, {7, 4294967295, 0, 9}, {0, 0, 0, 4}, {0, 0, 0, 2}, {7, 4294967295, 0, 1}, {0, 0, 0, 2}},
  };
  return cases;
}

Tensor of(const std::vector<int64_t>& v, DType dt) {
  std::vector<PyConst> c;
  for (int64_t x : v) c.push_back(PyConst(dt == dtypes::uint32 ? (pyint)(uint32_t)x : (pyint)x));
  return Tensor::from_values(c, {(int64_t)v.size()}, dt);
}

}  // namespace

class IntegerDivision : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cpu::register_device();
    interp::register_device();
    setenv("DEV", GetParam().c_str(), 1);
  }
  void TearDown() override { unsetenv("DEV"); }
};

TEST_P(IntegerDivision, ByZeroAndMinByMinusOneAreTheReferencesValues) {
  for (const DivCase& c : div_cases()) {
    SCOPED_TRACE(c.dt.repr());
    Tensor x = of(c.a, c.dt), y = of(c.b, c.dt);
    std::vector<int64_t> fl = ints(x.floordiv(y)), md = ints(x.mod(y)), tr = ints(x.div(y, false, "trunc"));
    if (c.dt == dtypes::uint32)
      for (auto* v : {&fl, &md, &tr})
        for (int64_t& e : *v) e = (int64_t)(uint32_t)e;
    EXPECT_EQ(fl, c.floordiv);
    EXPECT_EQ(md, c.mod);
    EXPECT_EQ(tr, c.trunc);
  }
}

// a divisor known only at run time, inside a reduction (the guard must hold in vectorized and unrolled code)
TEST_P(IntegerDivision, ZeroDivisorsInsideAKernelLoop) {
  std::vector<int64_t> a(64), b(64);
  for (int i = 0; i < 64; i++) a[i] = i * 3 - 50, b[i] = i % 4 == 0 ? 0 : (i % 7) - 3;
  Tensor x = of(a, dtypes::int32), y = of(b, dtypes::int32);
  int64_t want = 0;  // Tensor.mod is python's floor modulo, and x % 0 = x
  for (int i = 0; i < 64; i++) {
    int64_t r = b[i] == 0 ? a[i] : a[i] % b[i];
    if (b[i] != 0 && r != 0 && (r < 0) != (b[i] < 0)) r += b[i];
    want += r;
  }
  EXPECT_EQ(x.mod(y).sum().item<int>(), want);
}

INSTANTIATE_TEST_SUITE_P(Devices, IntegerDivision, ::testing::Values("CPU", "INTERP"));

TEST(TooLarge, CreationFailsBeforeAnythingIsCompiled) {
  cpu::register_device();
  setenv("DEV", "CPU", 1);
  const int64_t huge = (int64_t)1 << 40;  // 4 TiB of float32: more than any machine this runs on
  size_t compiled = get_device("CPU").compiler().cache_size();
  for (auto make : std::vector<std::function<Tensor()>>{
           [&] { return Tensor::empty({huge}); }, [&] { return Tensor::rand({huge}); },
           [&] { return Tensor::empty({1 << 20, 1 << 20}, dtypes::int64); }, [&] { return Tensor::zeros({huge}).contiguous(); },
           [&] { return Tensor::ones({1}).expand({huge}).contiguous(); }}) {
    try {
      make().realize();
      ADD_FAILURE() << "a 4 TiB tensor was created";
    } catch (const DeviceError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("does not fit on CPU"), std::string::npos) << m;
      EXPECT_NE(m.find("TiB"), std::string::npos) << m;
    }
  }
  EXPECT_EQ(get_device("CPU").compiler().cache_size(), compiled) << "something was compiled";
  // what does fit is unaffected
  EXPECT_EQ(Tensor::ones({1 << 10}).sum().item<float>(), 1024.0f);
  unsetenv("DEV");
}

TEST(EmptyReductions, ArgmaxOfAnEmptyAxisIsAnErrorOthersFollowTheReference) {
  cpu::register_device();
  interp::register_device();  // host data of tensors built from C++ values lives on PYTHON
  setenv("DEV", "CPU", 1);
  Tensor e = Tensor::empty({0});
  EXPECT_THROW(e.argmax(), Error);
  EXPECT_THROW(e.argmin(), Error);
  EXPECT_THROW(Tensor::empty({3, 0}).argmax(1), Error);
  try {
    Tensor::empty({3, 0}).argmax(1);
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("has size 0"), std::string::npos) << err.what();
  }
  // an empty tensor's argmax over a non-empty axis is an empty result, as in the reference
  EXPECT_TRUE(Tensor::empty({0, 3}).argmax(1).tolist_flat().empty());
  // the reference (DEV=CPU): Tensor([]).max() -inf, min() inf, sum() 0, prod() 1, mean() nan
  Tensor z = Tensor::from_values({}, {0}, dtypes::float32);
  EXPECT_EQ(z.max().item<float>(), -INFINITY);
  EXPECT_EQ(z.min().item<float>(), INFINITY);
  EXPECT_EQ(z.sum().item<float>(), 0.0f);
  EXPECT_EQ(z.prod().item<float>(), 1.0f);
  EXPECT_TRUE(std::isnan(z.mean().item<float>()));
  unsetenv("DEV");
}
