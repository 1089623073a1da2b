// Port of the reference's test/null/test_dtype.py, plus the promotion lattice and value tables of dtype.py replayed
// from goldens (tests/parity/gen_dtype_goldens.py -> tests/data/dtype_goldens.txt).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "lib/dtype.h"
#include "backends/interp/interp.h"
#include "lib/tensor.h"
#include "lib/uop/arg.h"
#include "lib/uop/serialize.h"
#include "tests/support/golden_file.h"

namespace tg {
static void PrintTo(const PyConst& c, std::ostream* os) { *os << c.repr(); }
static void PrintTo(const DType& d, std::ostream* os) { *os << (d ? d.repr() : std::string("DType()")); }
}  // namespace tg

using namespace tg;

// ***** test/null/test_dtype.py *****

TEST(TestEqStrDType, test_strs) { EXPECT_EQ(dtypes::float32.repr(), "dtypes.float"); }

TEST(TestToDtype, test_dtype_to_dtype) {
  // to_dtype(DType) is the identity; the port takes DTypes directly
  DType dtype = dtypes::int32;
  DType res = dtype;
  EXPECT_TRUE(res);
  EXPECT_EQ(res, dtypes::int32);
}

TEST(TestToDtype, test_str_to_dtype) {
  std::string dtype = "int32";
  DType res = dtypes::by_name(dtype);  // to_dtype(str): getattr(dtypes, dtype.lower())
  EXPECT_TRUE(res);
  EXPECT_EQ(res, dtypes::int32);
}

TEST(TestCastConvenienceMethod, test_method) {
  interp::register_device();  // the host data of Tensor([1, 2])
  for (DType input_dtype : {dtypes::float32, dtypes::int32}) {
    Tensor t = Tensor::from_vector<double>({1, 2}, input_dtype);
    EXPECT_EQ(t.dtype(), input_dtype);
    EXPECT_EQ(t.bool_().dtype(), dtypes::bool_);
    EXPECT_EQ(t.short_().dtype(), dtypes::int16);
    EXPECT_EQ(t.int_().dtype(), dtypes::int32);
    EXPECT_EQ(t.long_().dtype(), dtypes::int64);
    EXPECT_EQ(t.half().dtype(), dtypes::float16);
    EXPECT_EQ(t.bfloat16().dtype(), dtypes::bfloat16);
    EXPECT_EQ(t.float_().dtype(), dtypes::float32);
    EXPECT_EQ(t.double_().dtype(), dtypes::float64);
  }
}

// Tensor(values, device="PYTHON", dtype=...).tolist(): each value stored in the dtype and read back
TEST(TestDtypeTolist, test_bfloat16) {
  interp::register_device();
  EXPECT_EQ(Tensor::from_vector<double>({-60000, 1.5, 3.1, 60000}, dtypes::bfloat16, Arg("PYTHON")).to_vector<double>(),
            (std::vector<double>{-59904.0, 1.5, 3.09375, 59904.0}));
}

TEST(TestDtypeTolist, test_fp8) {
  interp::register_device();
  // 448
  EXPECT_EQ(Tensor::from_vector<double>({-30000, 1.5, 3.1, 30000}, dtypes::fp8e4m3, Arg("PYTHON")).to_vector<double>(),
            (std::vector<double>{-448.0, 1.5, 3.0, 448.0}));
  // 57344
  EXPECT_EQ(Tensor::from_vector<double>({-30000, 1.5, 3.1, 30000}, dtypes::fp8e5m2, Arg("PYTHON")).to_vector<double>(),
            (std::vector<double>{-28672.0, 1.5, 3.0, 28672.0}));
}

TEST(TestCanLosslessCast, test_can_lossless_cast) {
  // signed -> unsigned is NOT lossless (negative values wrap)
  EXPECT_FALSE(can_lossless_cast(dtypes::int8, dtypes::uint64));
  EXPECT_FALSE(can_lossless_cast(dtypes::int32, dtypes::uint32));
  // unsigned -> larger signed is lossless
  EXPECT_TRUE(can_lossless_cast(dtypes::uint8, dtypes::int16));
  EXPECT_TRUE(can_lossless_cast(dtypes::uint32, dtypes::int64));
  // large ints don't fit in floats
  EXPECT_FALSE(can_lossless_cast(dtypes::int32, dtypes::float32));
  EXPECT_FALSE(can_lossless_cast(dtypes::int64, dtypes::float64));
  // half has more mantissa bits
  EXPECT_TRUE(can_lossless_cast(dtypes::int8, dtypes::float16));
  EXPECT_FALSE(can_lossless_cast(dtypes::int8, dtypes::bfloat16));
}

TEST(TestInvalidSingleton, test_singleton) {
  // InvalidType() is Invalid: every Invalid is the same value, as a PyConst and as an Arg
  EXPECT_TRUE(PyConst::invalid().is_invalid());
  EXPECT_TRUE(same_const(PyConst::invalid(), PyConst::invalid()));
  EXPECT_EQ(PyConst::invalid(), PyConst::invalid());
  EXPECT_TRUE(Arg::invalid().same(Arg::invalid()));
  EXPECT_TRUE(Arg(PyConst::invalid()).same(Arg::invalid()));
  EXPECT_EQ(hash_const(PyConst::invalid()), hash_const(PyConst::invalid()));
}

TEST(TestInvalidSingleton, test_pickle) {
  // pickle round trip -> the port's arg codec (lib/uop/serialize.h)
  Arg back = decode_arg(encode_arg(Arg::invalid()));
  EXPECT_TRUE(back.is_invalid());
  EXPECT_TRUE(back.same(Arg::invalid()));
}

// ***** the promotion lattice and value tables, from goldens *****

namespace {

std::vector<std::vector<std::string>> golden_lines(const std::string& kind) {
  tg::test::GoldenFile f(TG_TEST_DATA "/dtype_goldens.txt");
  std::vector<std::vector<std::string>> out;
  while (f.next())
    if (f.key() == kind) out.push_back(f.words());
  return out;
}

DType dt(const std::string& name) {
  DType d = dtypes::by_name(name);
  EXPECT_TRUE(d) << "unknown dtype " << name;
  return d;
}

// python ints wider than the port's 128-bit pyint (weakint's bounds are +-2**799): the port saturates them by design
bool int_too_wide(const std::string& enc) {
  if (enc.empty() || enc[0] != 'i') return false;
  size_t digits = enc.size() - 1 - (enc.size() > 1 && enc[1] == '-');
  return digits > 38;
}

PyConst decode_const(const std::string& enc) {
  if (int_too_wide(enc)) return PyConst(enc[1] == '-' ? PYINT_MIN : PYINT_MAX);
  return decode_arg(enc).as_const();
}

// exact python equality of a value: same type (int/float/bool/Invalid), same value, -0.0 != 0.0, nan == nan
::testing::AssertionResult same_value(const PyConst& got, const std::string& want_enc) {
  PyConst want = decode_const(want_enc);
  bool ok = got.kind == want.kind;
  if (ok && got.is_float())
    ok = (std::isnan(got.f) && std::isnan(want.f)) || same_const(got, want);
  else if (ok)
    ok = got == want;
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got.repr() << " (" << encode_arg(Arg(got)) << "), want "
                                       << want.repr() << " (" << want_enc << ")";
}

const char* tf(bool b) { return b ? "T" : "F"; }

}  // namespace

TEST(DTypeGoldens, DTypeProperties) {
  auto lines = golden_lines("dtype");
  ASSERT_EQ(lines.size(), dtypes::all.size() + 2);  // dtypes.all + weakint, weakfloat
  for (const auto& w : lines) {
    ASSERT_EQ(w.size(), 12u);
    SCOPED_TRACE(w[1]);
    DType d = dt(w[1]);
    EXPECT_EQ(d.repr(), w[2]);
    EXPECT_EQ(d.priority(), std::stoi(w[3]));
    EXPECT_EQ(d.bitsize(), std::stoi(w[4]));
    EXPECT_EQ(d.itemsize(), std::stoi(w[5]));
    EXPECT_TRUE(same_value(d.min(), w[6])) << "min";
    EXPECT_TRUE(same_value(d.max(), w[7])) << "max";
    EXPECT_EQ(sum_acc_dtype(d), dt(w[8])) << "sum_acc_dtype";
    EXPECT_EQ(least_upper_float(d), dt(w[9])) << "least_upper_float";
    EXPECT_EQ(strong_dtype(d), dt(w[10])) << "strong_dtype";
    EXPECT_EQ(weak_dtype(d), dt(w[11])) << "weak_dtype";
  }
}

TEST(DTypeGoldens, EveryDtypeIsCovered) {
  auto lines = golden_lines("dtype");
  std::map<std::string, int> seen;
  for (const auto& w : lines) seen[dt(w[1]).repr()]++;
  for (DType d : dtypes::all) EXPECT_EQ(seen[d.repr()], 1) << d.repr();
  EXPECT_EQ(seen[dtypes::weakint.repr()], 1);
  EXPECT_EQ(seen[dtypes::weakfloat.repr()], 1);
  EXPECT_EQ(seen[dtypes::bool_.repr()], 1);
}

TEST(DTypeGoldens, LeastUpperDtypeCanLosslessCastAndOrder) {
  auto lines = golden_lines("pair");
  ASSERT_EQ(lines.size(), (dtypes::all.size() + 2) * (dtypes::all.size() + 2));
  for (const auto& w : lines) {
    ASSERT_EQ(w.size(), 6u);
    SCOPED_TRACE(w[1] + ", " + w[2]);
    DType a = dt(w[1]), b = dt(w[2]);
    EXPECT_EQ(least_upper_dtype({a, b}), dt(w[3])) << "least_upper_dtype";
    EXPECT_EQ(least_upper_dtype(std::vector<DType>{a, b}), dt(w[3])) << "least_upper_dtype(vector)";
    EXPECT_STREQ(tf(can_lossless_cast(a, b)), w[4].c_str()) << "can_lossless_cast";
    EXPECT_STREQ(tf(a < b), w[5].c_str()) << "DType.__lt__";
  }
}

TEST(DTypeGoldens, Truncate) {
  auto lines = golden_lines("truncate");
  ASSERT_GT(lines.size(), 400u);
  for (const auto& w : lines) {
    ASSERT_EQ(w.size(), 4u);
    SCOPED_TRACE("truncate[" + w[1] + "](" + w[2] + ")");
    DType d = dt(w[1]);
    EXPECT_TRUE(has_truncate(d));
    EXPECT_TRUE(same_value(truncate(d, decode_const(w[2])), w[3]));
  }
  // dtypes without a truncate entry
  EXPECT_FALSE(has_truncate(dtypes::weakint));
  EXPECT_FALSE(has_truncate(dtypes::weakfloat));
  EXPECT_FALSE(has_truncate(dtypes::void_));
}

TEST(DTypeGoldens, Const) {
  auto lines = golden_lines("const");
  ASSERT_GT(lines.size(), 200u);
  for (const auto& w : lines) {
    ASSERT_EQ(w.size(), 4u);
    SCOPED_TRACE(w[1] + ".const(" + w[2] + ")");
    EXPECT_TRUE(same_value(dt(w[1]).const_(decode_const(w[2])), w[3]));
  }
}
