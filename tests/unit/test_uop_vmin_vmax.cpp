// Port of the reference's test/null/test_uop_vmin_vmax.py: value ranges (vmin/vmax), const_factor and divides.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <ostream>
#include <utility>
#include <vector>

#include "lib/uop/uop.h"

namespace tg {
static void PrintTo(const PyConst& c, std::ostream* os) { *os << c.repr(); }
}  // namespace tg

using namespace tg;

namespace {

using MinMax = std::pair<PyConst, PyConst>;
MinMax mm(PyConst lo, PyConst hi) { return {lo, hi}; }

// python UOp.const(tuple): a STACK of CONSTs at strong_dtype(max(dtypes.from_py(x) for x in b))
UOp vconst(const std::vector<PyConst>& vals) {
  DType dt = dtypes::from_py(vals[0]);
  for (const PyConst& v : vals)
    if (dt < dtypes::from_py(v)) dt = dtypes::from_py(v);
  dt = strong_dtype(dt);
  std::vector<UOp> srcs;
  for (const PyConst& v : vals) srcs.push_back(UOp::const_(v, dt));
  return UOp::stack(srcs);
}

// python UOp.param(slot, dtype, (size,)): a GLOBAL PARAM whose src is the shape arg
UOp param(int64_t slot, DType dtype, pyint size) {
  auto* p = new ParamArg();
  p->slot = slot;
  p->dtype = dtype;
  return UOp(Ops::PARAM, DType(), {UOp::const_(PyConst(size))}, Arg(static_cast<const ArgObj*>(p)));
}

bool is_false(const PyConst& c) { return c.is_bool() && !c.truthy(); }
bool is_true(const PyConst& c) { return c.is_bool() && c.truthy(); }

}  // namespace

// ***** TestVminVmaxProperties *****

TEST(TestVminVmaxProperties, test_vmin_vmax_constant) {
  // vmin and vmax for a constant
  UOp uop = UOp::const_(PyConst(42));
  EXPECT_EQ(uop.vmin(), PyConst(42));
  EXPECT_EQ(uop.vmax(), PyConst(42));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_cmpne) {
  UOp uop = UOp::const_(PyConst(42));
  auto test_bool = [](const UOp& u, bool x) {
    EXPECT_EQ(u.vmin(), PyConst(x));
    EXPECT_EQ(u.vmax(), PyConst(x));
  };
  test_bool(uop.ne(UOp::const_(PyConst(42))), false);
  test_bool(uop.ne(UOp::const_(PyConst(43))), true);
  test_bool(uop.ne(UOp::const_(PyConst(41))), true);
}

TEST(TestVminVmaxProperties, test_vmin_vmax_addition_with_variable) {
  // vmin and vmax for addition with a variable
  UOp x = UOp::variable("x", 10, 20);
  UOp uop = x + 5;
  EXPECT_EQ(uop.vmin(), PyConst(15));
  EXPECT_EQ(uop.vmax(), PyConst(25));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_subtraction_with_variable) {
  UOp x = UOp::variable("x", 10, 20);
  UOp uop = x - 5;
  EXPECT_EQ(uop.vmin(), PyConst(5));
  EXPECT_EQ(uop.vmax(), PyConst(15));
  uop = 5 - x;
  EXPECT_EQ(uop.vmin(), PyConst(-15));
  EXPECT_EQ(uop.vmax(), PyConst(-5));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_and_with_variable) {
  UOp x = UOp::variable("x", 10, 20);
  UOp uop = x & 5;
  EXPECT_EQ(uop.vmin(), PyConst(0));
  EXPECT_EQ(uop.vmax(), PyConst(5));

  uop = x & 15;
  EXPECT_EQ(uop.vmin(), PyConst(0));
  EXPECT_EQ(uop.vmax(), PyConst(15));

  // TODO: this can be improved
  uop = x & 32;
  EXPECT_EQ(uop.vmin(), PyConst(0));
  EXPECT_EQ(uop.vmax(), PyConst(20));  // shoud be 0
}

TEST(TestVminVmaxProperties, test_vmin_vmax_and_with_negative_variable) {
  // when mask doesn't have sign bit set, result is always non-negative
  UOp x = UOp::variable("x", -100, 100, dtypes::int32);
  // 511 = 0x1FF, doesn't have sign bit set for int32
  UOp uop = x & 511;
  EXPECT_EQ(uop.vmin(), PyConst(0));
  EXPECT_EQ(uop.vmax(), PyConst(511));

  // 0x7FFFFFFF is max positive int32, doesn't have sign bit
  uop = x & 0x7FFFFFFF;
  EXPECT_EQ(uop.vmin(), PyConst(0));
  EXPECT_EQ(uop.vmax(), PyConst(0x7FFFFFFF));

  // negative mask: x & -1 could be anything since -1 has all bits set
  uop = x & -1;
  EXPECT_EQ(uop.vmin(), dtypes::int32.min());
  EXPECT_EQ(uop.vmax(), dtypes::int32.max());
}

TEST(TestVminVmaxProperties, test_vmin_vmax_multiplication_with_variable) {
  // vmin and vmax for multiplication with a variable
  UOp x = UOp::variable("x", -3, 4);
  UOp uop = x * 2;
  EXPECT_EQ(uop.vmin(), PyConst(-6));
  EXPECT_EQ(uop.vmax(), PyConst(8));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_variable_inside_special) {
  UOp uop(Ops::SPECIAL, DType(), {UOp::variable("i", 1, 10, dtypes::int32)}, Arg("gidx0"));
  EXPECT_EQ(uop.vmin(), PyConst(0));
  EXPECT_EQ(uop.vmax(), PyConst(9));
}

// a RANGE's (or SPECIAL's) vmax is (end - 1).vmax: with an int literal end it is taken from the literal, with any
// other end from the node end - 1; both ways agree, down to an empty range
TEST(TestVminVmaxProperties, test_vmin_vmax_range_literal_and_symbolic_end) {
  for (int64_t n : {int64_t(0), int64_t(1), int64_t(7), int64_t(512), int64_t(1) << 40}) {
    UOp r = UOp::range(n, 0);
    EXPECT_EQ(r.vmin(), PyConst(0)) << n;
    EXPECT_EQ(r.vmax(), PyConst(n - 1)) << n;
    EXPECT_EQ(r.vmax(), (UOp::const_(PyConst(n), dtypes::weakint) - UOp::const_(PyConst(1))).vmax()) << n;
    UOp sp(Ops::SPECIAL, dtypes::int32, {UOp::const_(PyConst(n), dtypes::int32)}, Arg("lidx0"));
    EXPECT_EQ(sp.vmax(), PyConst(n - 1)) << n;
  }
  UOp v = UOp::variable("n", 3, 9);
  UOp r = UOp::range(sint(v), 1);
  EXPECT_EQ(r.vmin(), PyConst(0));
  EXPECT_EQ(r.vmax(), PyConst(8));
  UOp r2 = UOp::range(sint(v * 4), 2);  // a computed end
  EXPECT_EQ(r2.vmax(), PyConst(35));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_multiplication_0_inf) {
  // vmin and vmax for multiplication with a variable
  UOp x = UOp::const_(PyConst(0.0));
  UOp y(Ops::LOAD, dtypes::float32, {param(0, dtypes::float32, 1), UOp::const_(PyConst(0))});
  UOp uop = x * y;
  // TODO: these should be 0, but definitely should not be nan
  EXPECT_EQ(uop.vmin(), PyConst(-std::numeric_limits<double>::infinity()));
  EXPECT_EQ(uop.vmax(), PyConst(std::numeric_limits<double>::infinity()));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_with_negative_multiplication) {
  // vmin and vmax when multiplying by a negative number
  UOp x = UOp::variable("x", 2, 5);
  UOp uop = x * -3;
  EXPECT_EQ(uop.vmin(), PyConst(-15));
  EXPECT_EQ(uop.vmax(), PyConst(-6));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_with_negative_multiplication2) {
  // vmin and vmax when multiplying by a negative number
  UOp x = UOp::variable("x", -2, 5);
  UOp uop = x * -3;
  EXPECT_EQ(uop.vmin(), PyConst(-15));
  EXPECT_EQ(uop.vmax(), PyConst(6));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_nested_min_max) {
  // vmin and vmax with nested min/max operations
  UOp x = UOp::variable("x", 0, 10);
  UOp uop = x.maximum(UOp::const_(PyConst(5))).minimum(UOp::const_(PyConst(8)));
  EXPECT_EQ(uop.vmin(), PyConst(5));
  EXPECT_EQ(uop.vmax(), PyConst(8));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_where) {
  UOp x = UOp::variable("x", 0, 10);
  UOp y = UOp::variable("y", 1, 11);
  UOp z = UOp::variable("z", 2, 12);
  UOp uop = (x < 5).where(y, z);
  EXPECT_EQ(uop.vmin(), PyConst(1));
  EXPECT_EQ(uop.vmax(), PyConst(12));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_shl) {
  UOp x = UOp::variable("x", 0, 10) << 5;
  EXPECT_EQ(x.vmin(), PyConst(0));
  EXPECT_EQ(x.vmax(), PyConst(10 << 5));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_shr) {
  UOp x = UOp::variable("x", 0, 10) >> 2;
  EXPECT_EQ(x.vmin(), PyConst(0));
  EXPECT_EQ(x.vmax(), PyConst(10 >> 2));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_cast_unsigned) {
  // a fitting source keeps exact bounds: no wrap can occur
  EXPECT_EQ(UOp::variable("x", 5, 10).cast(dtypes::uint8).min_max(), mm(5, 10));
  // a possibly-negative or too-large source can wrap: conservative
  EXPECT_EQ(UOp::variable("x", -1, 10).cast(dtypes::uint8).min_max(), mm(0, 255));
  EXPECT_EQ(UOp::variable("x", 250, 260).cast(dtypes::uint8).min_max(), mm(0, 255));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_xor_neg1) {
  UOp x = UOp::variable("x", 3, 7);
  UOp uop = x ^ -1;
  EXPECT_EQ(uop.vmin(), PyConst(~7));
  EXPECT_EQ(uop.vmax(), PyConst(~3));
  // negative range
  UOp y = UOp::variable("y", -10, -3);
  UOp uop2 = y ^ -1;
  EXPECT_EQ(uop2.vmin(), PyConst(~(-3)));
  EXPECT_EQ(uop2.vmax(), PyConst(~(-10)));
  // range spanning zero
  UOp z = UOp::variable("z", -5, 6);
  UOp uop3 = z ^ -1;
  EXPECT_EQ(uop3.vmin(), PyConst(~6));
  EXPECT_EQ(uop3.vmax(), PyConst(~(-5)));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_cast) {
  UOp x = UOp::variable("x", -10, 10, dtypes::int32);
  UOp x_float = x.cast(dtypes::float32);
  EXPECT_EQ(x_float.vmin(), PyConst(-10));
  EXPECT_EQ(x_float.vmax(), PyConst(10));
  UOp x_bool = x.cast(dtypes::bool_);
  EXPECT_EQ(x_bool.vmin(), PyConst(false));
  EXPECT_EQ(x_bool.vmax(), PyConst(true));
  UOp x_uint = x.cast(dtypes::uint32);
  EXPECT_EQ(x_uint.vmin(), dtypes::uint32.min());
  EXPECT_EQ(x_uint.vmax(), dtypes::uint32.max());
}

TEST(TestVminVmaxProperties, test_vmin_vmax_cast_float_to_int) {
  EXPECT_EQ(UOp::variable("x", -4.5, 4.5, dtypes::float32).cast(dtypes::int32).min_max(), mm(-4, 4));
  EXPECT_EQ(UOp::const_(PyConst(4.5)).cast(dtypes::float32).cast(dtypes::int32).min_max(), mm(4, 4));
  UOp x = UOp::const_(PyConst(4.5)).cast(dtypes::float32);
  UOp r = x.ne(x.cast(dtypes::int32).cast(dtypes::float32)).simplify();  // assertIs(..., True)
  EXPECT_TRUE(r.arg().is_bool() && r.arg().as_bool()) << r.arg().repr();
}

TEST(TestVminVmaxProperties, test_vmin_vmax_cast_int_to_float_grid) {
  // a cast to float only takes values on the float grid, so its bounds are the source bounds rounded at the destination
  EXPECT_EQ(UOp::variable("x", 0, 16777219, dtypes::int32).cast(dtypes::float32).min_max(), mm(0.0, 16777220.0));
}

TEST(TestVminVmaxProperties, test_vmin_vmax_invalid) {
  UOp i = UOp::invalid();
  EXPECT_NE(i.vmin(), i.vmax());
}

TEST(TestVminVmaxProperties, test_vmin_vmax_invalid_vconst) {
  UOp x = vconst({0, 4, PyConst::invalid(), PyConst::invalid()});
  EXPECT_EQ(std::make_pair(x.vmin(), x.vmax()), mm(0, 4));
}

// ***** TestVminVmaxDivMod *****

TEST(TestVminVmaxDivMod, test_vmin_vmax_division_positive) {
  // vmin and vmax for division of a variable by a positive constant
  UOp x = UOp::variable("x", 10, 20);
  UOp uop = x.floordiv(UOp::const_(PyConst(2)));
  EXPECT_EQ(uop.vmin(), PyConst(5));
  EXPECT_EQ(uop.vmax(), PyConst(10));
}

TEST(TestVminVmaxDivMod, test_vmin_vmax_division_negative) {
  // floor division of a variable by a negative constant
  UOp x = UOp::variable("x", 10, 20);
  UOp uop = x.floordiv(UOp::const_(PyConst(-2)));
  EXPECT_EQ(uop.vmin(), PyConst(-10));
  EXPECT_EQ(uop.vmax(), PyConst(-5));
  uop = x.floordiv(UOp::const_(PyConst(-3)));
  EXPECT_EQ(uop.vmin(), PyConst(-7));
  EXPECT_EQ(uop.vmax(), PyConst(-4));

  x = UOp::variable("x", -20, -10);
  uop = x.floordiv(UOp::const_(PyConst(-2)));
  EXPECT_EQ(uop.vmin(), PyConst(5));
  EXPECT_EQ(uop.vmax(), PyConst(10));
  uop = x.floordiv(UOp::const_(PyConst(-3)));
  EXPECT_EQ(uop.vmin(), PyConst(3));
  EXPECT_EQ(uop.vmax(), PyConst(6));
}

TEST(TestVminVmaxDivMod, test_vmin_vmax_floordiv_floormod) {
  UOp x = UOp::variable("x", -7, 7);
  UOp floordiv = x.alu(Ops::FLOORDIV, UOp::const_(PyConst(3)));
  EXPECT_EQ(floordiv.vmin(), PyConst(-3));
  EXPECT_EQ(floordiv.vmax(), PyConst(2));
  UOp floormod = x.alu(Ops::FLOORMOD, UOp::const_(PyConst(3)));
  EXPECT_EQ(floormod.vmin(), PyConst(0));
  EXPECT_EQ(floormod.vmax(), PyConst(2));
  // negative const divisor: floormod range is [c+1, 0]
  UOp floormod_neg = x.alu(Ops::FLOORMOD, UOp::const_(PyConst(-3)));
  EXPECT_EQ(floormod_neg.vmin(), PyConst(-2));
  EXPECT_EQ(floormod_neg.vmax(), PyConst(0));

  // cross 0
  x = UOp::variable("x", -10, 10);
  UOp uop = x.floordiv(UOp::const_(PyConst(-2)));
  EXPECT_EQ(uop.vmin(), PyConst(-5));
  EXPECT_EQ(uop.vmax(), PyConst(5));
  uop = x.floordiv(UOp::const_(PyConst(-3)));
  EXPECT_EQ(uop.vmin(), PyConst(-4));
  EXPECT_EQ(uop.vmax(), PyConst(3));
}

TEST(TestVminVmaxDivMod, test_vmin_vmax_floordiv_floormod_empty_range) {
  // empty numerator range (vmin > vmax, e.g. RANGE with end=0) short-circuits to (0, 0)
  UOp rng = UOp::range(0, 0);
  EXPECT_EQ(rng.vmin(), PyConst(0));
  EXPECT_EQ(rng.vmax(), PyConst(-1));
  EXPECT_EQ(rng.floordiv(UOp::const_(PyConst(4))).vmin(), PyConst(0));
  EXPECT_EQ(rng.floordiv(UOp::const_(PyConst(4))).vmax(), PyConst(0));
  EXPECT_EQ((rng % 4).vmin(), PyConst(0));
  EXPECT_EQ((rng % 4).vmax(), PyConst(0));
}

TEST(TestVminVmaxDivMod, test_vmin_vmax_div_symbolic) {
  UOp x = UOp::variable("x", 1, 10);
  UOp y = UOp::variable("y", 3, 5);
  EXPECT_EQ(x.floordiv(y).vmin(), PyConst(0));
  EXPECT_EQ(x.floordiv(y).vmax(), PyConst(3));
  EXPECT_EQ((-x).floordiv(y).vmin(), PyConst(-4));
  EXPECT_EQ((-x).floordiv(y).vmax(), PyConst(-1));
  EXPECT_EQ(x.floordiv(-y).vmin(), PyConst(-4));
  EXPECT_EQ(x.floordiv(-y).vmax(), PyConst(-1));
  EXPECT_EQ((-x).floordiv(-y).vmin(), PyConst(0));
  EXPECT_EQ((-x).floordiv(-y).vmax(), PyConst(3));

  // python's reflected 100//y is y.__rfloordiv__(100)
  UOp c100 = UOp::const_(PyConst(100)), cm100 = UOp::const_(PyConst(-100));
  EXPECT_EQ(y.floordiv(c100, true).vmin(), PyConst(20));
  EXPECT_EQ(y.floordiv(c100, true).vmax(), PyConst(33));
  EXPECT_EQ(y.floordiv(cm100, true).vmin(), PyConst(-34));
  EXPECT_EQ(y.floordiv(cm100, true).vmax(), PyConst(-20));
  EXPECT_EQ((-y).floordiv(c100, true).vmin(), PyConst(-34));
  EXPECT_EQ((-y).floordiv(c100, true).vmax(), PyConst(-20));
  EXPECT_EQ((-y).floordiv(cm100, true).vmin(), PyConst(20));
  EXPECT_EQ((-y).floordiv(cm100, true).vmax(), PyConst(33));
}

TEST(TestVminVmaxDivMod, test_vmin_vmax_mod_positive) {
  // floor mod with positive divisor: result in [0, c-1] regardless of dividend sign
  UOp positive = UOp::variable("positive", 10, 20);
  UOp uop = positive % 3;
  EXPECT_EQ(uop.vmin(), PyConst(0));
  EXPECT_EQ(uop.vmax(), PyConst(2));

  UOp negative = UOp::variable("negative", -20, -10);
  uop = negative % 3;
  EXPECT_EQ(uop.vmin(), PyConst(0));
  EXPECT_EQ(uop.vmax(), PyConst(2));

  UOp mixed = UOp::variable("mixed", -20, 20);
  uop = mixed % 3;
  EXPECT_EQ(uop.vmin(), PyConst(0));
  EXPECT_EQ(uop.vmax(), PyConst(2));
}

TEST(TestVminVmaxDivMod, test_vmin_vmax_mod_negative) {
  // floor mod with negative divisor: result in [c+1, 0] regardless of dividend sign
  UOp positive = UOp::variable("positive", 10, 20);
  UOp uop = positive % -3;
  EXPECT_EQ(uop.vmin(), PyConst(-2));
  EXPECT_EQ(uop.vmax(), PyConst(0));

  UOp negative = UOp::variable("negative", -20, -10);
  uop = negative % -3;
  EXPECT_EQ(uop.vmin(), PyConst(-2));
  EXPECT_EQ(uop.vmax(), PyConst(0));

  UOp mixed = UOp::variable("mixed", -20, 20);
  uop = mixed % -3;
  EXPECT_EQ(uop.vmin(), PyConst(-2));
  EXPECT_EQ(uop.vmax(), PyConst(0));
}

// ***** TestVminVmaxVConst *****

TEST(TestVminVmaxVConst, test_vmin_vmax_vconst_single_element) {
  // vmin and vmax for a single-element vector constant
  UOp uop = vconst({42});
  EXPECT_EQ(uop.vmin(), PyConst(42));
  EXPECT_EQ(uop.vmax(), PyConst(42));
}

TEST(TestVminVmaxVConst, test_vmin_vmax_vconst_multiple_elements) {
  // vmin and vmax for a multi-element vector constant
  UOp uop = vconst({10, 20, -5, 7});
  EXPECT_EQ(uop.vmin(), PyConst(-5));
  EXPECT_EQ(uop.vmax(), PyConst(20));
}

TEST(TestVminVmaxVConst, test_vmin_vmax_vconst_all_equal) {
  // vmin and vmax for a vector where all elements are equal
  UOp uop = vconst({7, 7, 7});
  EXPECT_EQ(uop.vmin(), PyConst(7));
  EXPECT_EQ(uop.vmax(), PyConst(7));
}

TEST(TestVminVmaxVConst, test_vmin_vmax_vconst_with_negative_values) {
  // vmin and vmax for a vector constant containing negative values
  UOp uop = vconst({-10, -20, -5, -15});
  EXPECT_EQ(uop.vmin(), PyConst(-20));
  EXPECT_EQ(uop.vmax(), PyConst(-5));
}

TEST(TestVminVmaxVConst, test_vmin_vmax_vconst_with_floats) {
  // vmin and vmax for a vector constant of float values
  UOp uop = vconst({1.5, -3.2, 0.0});
  EXPECT_EQ(uop.vmin(), truncate(dtypes::default_float(), PyConst(-3.2)));
  EXPECT_EQ(uop.vmax(), truncate(dtypes::default_float(), PyConst(1.5)));
}

TEST(TestVminVmaxVConst, test_vmin_vmax_vconst_with_bools) {
  // vmin and vmax for a vector constant of bool values
  UOp uop = vconst({true, false, false});
  EXPECT_TRUE(is_false(uop.vmin())) << uop.vmin().repr();  // assertIs(uop.vmin, False)
  EXPECT_TRUE(is_true(uop.vmax())) << uop.vmax().repr();   // assertIs(uop.vmax, True)
}

TEST(TestVminVmaxVConst, test_vmin_vmax_vector_with_gep) {
  // vmin and vmax for a vector constant of bool values
  UOp d1 = param(1, dtypes::int32, 1);
  UOp idx = UOp::const_(PyConst(0));
  UOp val(Ops::LOAD, DType(), {d1.index(idx)});
  UOp uop = val.floordiv(UOp::const_(PyConst(32)));
  EXPECT_EQ(uop.vmin(), PyConst(-67108864));
  EXPECT_EQ(uop.vmax(), PyConst(67108863));
}

// ***** TestConstFactor *****

TEST(TestConstFactor, test_const_factor_constant) {
  // const_factor for a constant
  UOp uop = UOp::const_(PyConst(42));
  EXPECT_EQ(uop.const_factor(), PyConst(42));
}

TEST(TestConstFactor, test_const_factor_addition) {
  // const_factor for an addition of constants
  UOp uop = UOp::const_(PyConst(30)) + UOp::const_(PyConst(12));
  EXPECT_EQ(uop.const_factor(), PyConst(6));  // GCD(30, 12) = 6
}

TEST(TestConstFactor, test_const_factor_multiplication) {
  // const_factor for a multiplication of constants
  UOp uop = UOp::const_(PyConst(5)) * UOp::const_(PyConst(7));
  EXPECT_EQ(uop.const_factor(), PyConst(5));  // For multiplication, it's one of the factors
}

TEST(TestConstFactor, test_const_factor_with_variable) {
  // const_factor for an expression involving a variable
  UOp x = UOp::variable("x", 10, 20);
  UOp uop = x * 3;
  EXPECT_EQ(uop.const_factor(), PyConst(3));
}

TEST(TestConstFactor, test_const_factor_division) {
  // const_factor for an expression with division
  UOp x = UOp::variable("x", 10, 20);
  UOp uop = x.floordiv(UOp::const_(PyConst(4)));
  EXPECT_EQ(uop.const_factor(), PyConst(1));  // Division reduces the const_factor to 1
}

TEST(TestConstFactor, test_const_factor_multiplication_of_var_and_const) {
  // const_factor for multiplication of a variable and a constant
  UOp x = UOp::variable("x", 6, 18);
  UOp uop = x * 4;
  EXPECT_EQ(uop.const_factor(), PyConst(4));  // Constant factor 4
}

TEST(TestConstFactor, test_const_factor_multiplication_of_consts_and_vars) {
  GTEST_SKIP() << "broken (@unittest.skip in the reference)";
  // Multiplying constants and variables
  UOp x = UOp::variable("x", 10, 20);
  UOp uop = (x * 3) * 5;
  EXPECT_EQ(uop.const_factor(), PyConst(15));  // Constant multipliers are combined (3 * 5 = 15)
}

TEST(TestConstFactor, test_const_factor_variable_multiple_of) {
  UOp x = UOp::variable("x", 16, 32, DType(), 4);
  EXPECT_EQ(x.const_factor(), PyConst(4));
}

// ***** TestDivides *****

TEST(TestDivides, test_divides_constant_exact) {
  // Divides a constant by an exact divisor
  UOp uop = UOp::const_(PyConst(42));
  UOp result = uop.divides(7);
  ASSERT_TRUE(result);
  EXPECT_EQ(result.const_factor(), PyConst(6));  // 42 / 7 = 6
}

TEST(TestDivides, test_divides_constant_inexact) {
  // Try to divide a constant by a non-exact divisor
  UOp uop = UOp::const_(PyConst(42));
  UOp result = uop.divides(5);
  EXPECT_FALSE(result);  // 42 is not divisible by 5
}

TEST(TestDivides, test_divides_variable_and_constant) {
  GTEST_SKIP() << "broken (@unittest.skip in the reference)";
  // Multiplying a variable by a constant, then dividing by the same constant
  UOp x = UOp::variable("x", 10, 20);
  UOp uop = x * 6;
  UOp result = uop.divides(6);
  ASSERT_TRUE(result);
  EXPECT_TRUE(result == x);  // (x * 6) / 6 = x
}

TEST(TestDivides, test_divides_complex_expression) {
  // Dividing a more complex expression
  UOp x = UOp::variable("x", 10, 20);
  UOp uop = (x * 6) + 18;
  UOp result = uop.divides(6);
  ASSERT_TRUE(result);
  EXPECT_EQ(result.const_factor(), PyConst(1));  // (x + 3), const_factor is 1
}

TEST(TestDivides, test_divides_with_inexact_factors) {
  // Multiplying by a constant but dividing by a non-exact divisor
  UOp x = UOp::variable("x", 15, 45);
  UOp uop = x * 4;
  UOp result = uop.divides(3);
  EXPECT_FALSE(result);  // Cannot divide by 3, since 4 is not divisible by 3
}

TEST(TestDivides, test_divides_variable_multiple_of_exact) {
  UOp x = UOp::variable("x", 16, 32, DType(), 4);
  UOp result = x.divides(4);
  EXPECT_TRUE(result);
}

TEST(TestDivides, test_divides_variable_multiple_of_factor) {
  UOp x = UOp::variable("x", 16, 32, DType(), 4);
  UOp result = x.divides(2);
  EXPECT_TRUE(result);
}
