// The C++ face of the builder mixins: what the goldens cannot see. Errors a user can cause are tg::Error with a message
// saying what and where; results have the reference's shapes; the operators are the python operators (reflected ones
// keep the UOp as self); no-op movements return the node itself; the default device.
#include <gtest/gtest.h>

#include <cstdlib>

#include "lib/helpers.h"
#include "lib/uop/uop.h"

using namespace tg;

namespace {

UOp P(int64_t slot, DType dt, Shape shape) { return UOp::param(slot, dt, shape); }
UOp f23() { return P(0, dtypes::float32, {2, 3}); }
UOp i23() { return P(1, dtypes::int32, {2, 3}); }
UOp f432() { return P(2, dtypes::float32, {4, 3, 2}); }

// the shape as ints (every test shape here is concrete)
std::vector<int64_t> shp(const UOp& u) {
  std::vector<int64_t> r;
  for (const sint& s : u.shape()) r.push_back((int64_t)s.i());
  return r;
}
using V = std::vector<int64_t>;

// fn must throw tg::Error whose message contains every one of `parts`
template <typename F>
void expect_error(F fn, std::initializer_list<const char*> parts) {
  try {
    fn();
    ADD_FAILURE() << "no error, expected one mentioning " << *parts.begin();
  } catch (const Error& e) {
    std::string msg = e.what();
    for (const char* p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

}  // namespace

TEST(MixinErrors, ShapesAndAxesSayWhatAndWhere) {
  expect_error([] { f23().reshape({5, 2}); }, {"reshape", "(2, 3)", "(5, 2)"});
  expect_error([] { f23().reshape({-1, -1}); }, {"reshape", "only one dimension can be inferred"});
  expect_error([] { f23().reshape({-2, -3}); }, {"negative"});
  expect_error([] { f23().expand({4, 3}); }, {"cannot broadcast (2, 3)", "(4, 3)"});
  expect_error([] { f23().expand({3}); }, {"cannot broadcast"});
  // like the reference, an ALU op broadcasts lazily: the mismatch surfaces when the shape is asked for
  expect_error([] { (f23() + f432()).shape(); }, {"shape mismatch", "(2, 3)", "(4, 3, 2)"});
  expect_error([] { (f23() + f432()).sum(); }, {"shape mismatch"});
  expect_error([] { f23().sum(2); }, {"dim=2 out of range [-2, 1]"});
  expect_error([] { f23().max(-3); }, {"dim=-3 out of range"});
  expect_error([] { f23().unsqueeze(3); }, {"dim=3 out of range [-3, 2]"});
  expect_error([] { f432().permute({0, 0, 1}); }, {"permute", "not a valid permutation", "(0, 0, 1)"});
  expect_error([] { f432().flip({1, 1}); }, {"flip", "at most once"});
  expect_error([] { f23().transpose(0, 2); }, {"transpose", "out of range"});
  expect_error([] { f23().shrink({{0, 3}, std::nullopt}); }, {"invalid shrink ((0, 3), (0, 3)) for (2, 3)"});
  expect_error([] { f23().shrink({{-1, 1}, std::nullopt}); }, {"invalid shrink"});
  expect_error([] { f23().shrink({{0, 1}}); }, {"shrink", "ndim=2", "len(arg)=1"});
  expect_error([] { f23().movement_pad({{-1, 0}, std::nullopt}); }, {"invalid pad", "for (2, 3)"});
  expect_error([] { f23().pad({{1, 1}}); }, {"padding length is improper"});
  expect_error([] { f23().pad_flat({1, 2, 3}); }, {"even number of pads"});
  expect_error([] { f23().pad({{1, 1}, std::nullopt}, "wrap"); }, {"mode='wrap'"});
  expect_error([] { f23().pad({{3, 0}, std::nullopt}, "circular"); }, {"wrapping around more than once"});
  expect_error([] { f23().pad_to({4}); }, {"pad_to", "(2, 3)"});
  expect_error([] { UOp::stack({f23(), P(3, dtypes::float32, {3})}); }, {"stack", "(2, 3)", "(3,)"});
  expect_error([] { f23().split(V{1, 2}); }, {"split", "sum exactly to 2", "got 3"});
  expect_error([] { f23().chunk(0); }, {"chunk", "greater than 0"});
  expect_error([] { f23().unfold(1, 4, 1); }, {"unfold", "maximum size"});
  expect_error([] { f23().diag(); }, {"diag", "1-D"});
  expect_error([] { f23().cat({P(3, dtypes::float32, {2, 4})}); }, {"cat", "(2, 3)", "(2, 4)"});
  expect_error([] { f23().dot(f23()); }, {"cannot dot (2, 3) and (2, 3)"});
  expect_error([] { f23().rearrange("a b -> a c"); }, {"rearrange", "name mismatch"});
  expect_error([] { f23().rearrange("a b c -> c b a"); }, {"rearrange"});
  expect_error([] { UOp::einsum("ijk->kji", std::vector<UOp>{f23()}); }, {"einsum"});
  expect_error([] { P(3, dtypes::float32, {3}).pool({4}); }, {"kernel size cannot be greater"});
}

TEST(MixinErrors, ValuesAndDtypes) {
  expect_error([] { i23().pow(-1); }, {"pow", "base needs to be float"});
  expect_error([] { f23().lshift(1); }, {"shift operands must be int"});
  expect_error([] { f23().where(1, 0); }, {"where cond must be bool"});
  expect_error([] { UOp::const_(3).bitcast(dtypes::int32); }, {"bitcast requires concrete dtypes"});
  expect_error([] { f23().div(2, false, "round"); }, {"rounding_mode='round'"});
  expect_error([] { f23().gelu("fast"); }, {"gelu", "fast"});
  expect_error([] { f23().clamp(std::nullopt, std::nullopt); }, {"clamp", "at least one"});
  expect_error([] { f23().one_hot(3); }, {"one_hot", "integer dtype"});
  expect_error([] { UOp::arange(250, 260, 1, dtypes::uint8); }, {"arange", "not representable"});
  expect_error([] { UOp::linspace(0, 1, -1); }, {"linspace", "non-negative"});
  expect_error([] { UOp::param(0, dtypes::weakint, Shape{2}); }, {"weak dtype"});
  expect_error([] { UOp::empty({2}, dtypes::weakfloat, Arg("CPU")); }, {"weak dtype"});
  expect_error([] { f23().cast("float128"); }, {});
}

TEST(MixinErrors, IndexingSaysWhatAndWhere) {
  UOp t = UOp::arange(4);
  expect_error([&] { t[{4}]; }, {"index=4 is out of bounds with size=4"});
  expect_error([&] { t[{1, 2}]; }, {"too many indices (2) for 1D"});
  expect_error([&] { t[{Ellipsis, Ellipsis}]; }, {"single ellipsis"});
  expect_error([&] { t[{Index::slice(std::nullopt, std::nullopt, 0)}]; }, {"0 as step"});
  expect_error([&] { t[{UOp::arange(2, std::nullopt, 1, dtypes::float32)}]; }, {"index dtype", "float"});
}

TEST(MixinShapes, MovementResults) {
  EXPECT_EQ(shp(f432().reshape({4, -1})), (V{4, 6}));
  EXPECT_EQ(shp(f432().reshape({-1})), (V{24}));
  expect_error(
      [] {
        P(3, dtypes::float32, {0, 3}).reshape({0, -1, 3});
      },
      {"division"});  // -1 next to a 0: python 0 // 0
  EXPECT_EQ(shp(P(3, dtypes::float32, {2, 1}).expand({-1, 5})), (V{2, 5}));
  EXPECT_EQ(shp(P(3, dtypes::float32, {3}).expand({2, 4, 3})), (V{2, 4, 3}));
  EXPECT_EQ(shp(P(3, dtypes::float32, {1, 3, 1}).expand({5, 2, 3, 4})), (V{5, 2, 3, 4}));
  EXPECT_EQ(shp(f432().permute({-1, 0, -2})), (V{2, 4, 3}));
  EXPECT_EQ(shp(f23().pad({{1, 2}, std::nullopt})), (V{5, 3}));
  EXPECT_EQ(shp(f23().pad({{-1, 1}, {0, -2}})), (V{2, 1}));
  EXPECT_EQ(shp(f23().pad_flat({1, 2, 0, 3})), (V{5, 6}));
  EXPECT_EQ(shp(f23().pad({{1, 1}, {2, 0}}, "circular")), (V{4, 5}));
  EXPECT_EQ(shp(UOp::arange(12).reshape({3, 4}).pad({{1, 1}, {2, 1}}, "reflect")), (V{5, 7}));
  EXPECT_EQ(shp(f23().pad({{1, 2}, {0, 3}}, "replicate")), (V{5, 6}));
  EXPECT_EQ(shp(f432().shrink({{1, 3}, std::nullopt, {0, 1}})), (V{2, 3, 1}));
  EXPECT_EQ(shp(f23().shrink({{1, 1}, std::nullopt})), (V{0, 3}));
  EXPECT_EQ(shp(UOp::stack({f23(), f23(), f23()}, -1)), (V{2, 3, 3}));
  EXPECT_EQ(shp(UOp::stack({f23(), f23()}, 1)), (V{2, 2, 3}));
  EXPECT_EQ(shp(P(3, dtypes::float32, {1, 3, 1}).squeeze()), (V{3}));
  EXPECT_EQ(shp(f23().unsqueeze(-1)), (V{2, 3, 1}));
  EXPECT_EQ(shp(f432().flatten(1)), (V{4, 6}));
  EXPECT_EQ(shp(f432().flatten(2, 1)), (V{4, 3, 1, 2})) << "an empty range flattens to a size-1 axis, like python";
  EXPECT_EQ(shp(P(3, dtypes::float32, {6, 4}).unflatten(-1, {2, -1})), (V{6, 2, 2}));
  EXPECT_EQ(shp(f23().repeat({2, 2, 3})), (V{2, 4, 9}));
  EXPECT_EQ(shp(f23().repeat_interleave(2)), (V{12}));
  EXPECT_EQ(shp(f23().roll({1, 2}, V{0, 1})), (V{2, 3}));
  EXPECT_EQ(shp(P(3, dtypes::float32, {3}).diag()), (V{3, 3}));
  EXPECT_EQ(shp(P(3, dtypes::float32, {3, 4}).diagonal(1)), (V{3}));
  EXPECT_EQ(shp(P(3, dtypes::float32, {1, 5, 5}).pool({2, 2})), (V{1, 4, 4, 2, 2}));
  EXPECT_EQ(shp(P(3, dtypes::float32, {1, 6, 6}).pool({3, 3}, 2)), (V{1, 2, 2, 3, 3}));
  EXPECT_EQ(shp(P(3, dtypes::float32, {8}).unfold(0, 2, 2)), (V{4, 2}));
  EXPECT_EQ(shp(f432().rearrange("a b c -> a (b c)")), (V{4, 6}));
  EXPECT_EQ(shp(P(3, dtypes::float32, {6, 4}).rearrange("(h w) c -> h w c", {{"h", 2}})), (V{2, 3, 4}));
  auto parts = P(3, dtypes::float32, {11}).chunk(6);
  ASSERT_EQ(parts.size(), 6u);
  EXPECT_EQ(shp(parts.back()), (V{1}));
  auto sp = P(3, dtypes::float32, {5, 2}).split(V{1, 4});
  EXPECT_EQ(shp(sp[0]), (V{1, 2}));
  EXPECT_EQ(shp(sp[1]), (V{4, 2}));
  auto grid = P(3, dtypes::float32, {3}).meshgrid(std::vector<UOp>{P(4, dtypes::float32, {4})}, "xy");
  EXPECT_EQ(shp(grid[0]), (V{4, 3}));
}

// the memory planner cuts each buffer out of its arena with a SHRINK instead of arena[off:off+nb] (the reference's
// form): on a device buffer, an in-bounds slice of its one axis is that SHRINK, node for node
TEST(MixinShapes, InBoundsSliceOfABufferIsItsShrink) {
  UOp arena = UOp::new_buffer(Arg("CPU"), 4096, dtypes::int8);
  for (auto [a, b] : {std::pair<int64_t, int64_t>{0, 4096}, {0, 64}, {128, 1152}, {4032, 4096}, {7, 8}}) {
    UOp sliced = arena.getitem({Index::slice(sint(a), sint(b))});
    EXPECT_TRUE(sliced == arena.shrink({OptPair(sint(a), sint(b))})) << a << ":" << b << " gave " << sliced.repr();
  }
}

// a reshape to the node's own shape is the node itself (movement.py: `self if ret.shape == self.shape`); with int dims
// no RESHAPE is built for it, with a symbolic dim it is built and compared
TEST(MixinShapes, ReshapeToItsOwnShapeIsTheNode) {
  UOp p = P(3, dtypes::float32, {2, 3});
  EXPECT_TRUE(p.reshape({2, 3}) == p);
  EXPECT_TRUE(p.reshape({-1, 3}) == p);
  UOp r = p.reshape({3, 2});
  EXPECT_EQ(r.op(), Ops::RESHAPE);
  EXPECT_TRUE(r.reshape({3, 2}) == r);
  EXPECT_TRUE(r.reshape({2, 3}).src(0) == r);
  UOp n = UOp::variable("n", 1, 8);
  UOp s = P(4, dtypes::float32, {2, 8}).shrink({OptPair(0, 2), OptPair(0, sint(n))});
  EXPECT_TRUE(s.reshape({2, sint(n)}) == s);
}

TEST(MixinShapes, ReduceAndOpResults) {
  EXPECT_EQ(shp(f432().sum()), V{});
  EXPECT_EQ(shp(f432().sum(1)), (V{4, 2}));
  EXPECT_EQ(shp(f432().sum({0, -1}, true)), (V{1, 3, 1}));
  EXPECT_EQ(shp(f432().sum(std::vector<int64_t>{})), (V{4, 3, 2})) << "an empty axis list reduces nothing";
  EXPECT_EQ(shp(f432().max(-1, true)), (V{4, 3, 1}));
  EXPECT_EQ(shp(f432().mean(1)), (V{4, 2}));
  EXPECT_EQ(shp(f432().std(1, true)), (V{4, 1, 2}));
  EXPECT_EQ(shp(f432().logsumexp(1)), (V{4, 2}));
  EXPECT_EQ(shp(f432().softmax(0)), (V{4, 3, 2}));
  EXPECT_EQ(shp(f432().argmax(1)), (V{4, 2}));
  EXPECT_EQ(shp(f432().argmax()), V{});
  EXPECT_EQ(shp(P(3, dtypes::float32, {5, 2, 3}).dot(P(4, dtypes::float32, {3, 4}))), (V{5, 2, 4}));
  EXPECT_EQ(shp(P(3, dtypes::float32, {3}).dot(P(4, dtypes::float32, {3, 4}))), (V{4}));
  EXPECT_EQ(shp(f23().matmul(P(4, dtypes::float32, {3, 2}))), (V{2, 2}));
  EXPECT_EQ(shp(f23().cat({P(4, dtypes::float32, {4, 3})})), (V{6, 3}));
  EXPECT_EQ(shp(f23().cat({f23()}, 1)), (V{2, 6}));
  EXPECT_EQ(shp(UOp::arange(1200).reshape({2, 600}).cumsum(1)), (V{2, 600}));
  // a buffer's [..., -s:] keeps the negative start (UOp.__getitem__'s buffer path): the reference fails there too
  expect_error([] { P(3, dtypes::int32, {2, 600}).cumsum(1); }, {"invalid shrink"});
  EXPECT_EQ(shp(UOp::arange(600).cumsum()), (V{600}));
  EXPECT_EQ(shp(UOp::arange(3).one_hot(5)), (V{3, 5}));
  // a buffer's [..., None] goes to INDEX (UOp.__getitem__'s buffer path), which has no None: the reference fails too
  expect_error([] { P(3, dtypes::int32, {3}).one_hot(5); }, {"getitem"});
  EXPECT_EQ(shp(UOp::arange(12).reshape({3, 4})[{Index::slice(1), Index::slice(std::nullopt, std::nullopt, -2)}]),
            (V{2, 2}));
  EXPECT_EQ(shp(UOp::arange(24).reshape({2, 3, 4})[{Ellipsis, std::nullopt, 1}]), (V{2, 3, 1}));
  EXPECT_EQ(shp(UOp::arange(12).reshape({3, 4})[{UOp::arange(5, std::nullopt, 1, dtypes::int32).reshape({5, 1}), 2}]),
            (V{5, 1}));
  EXPECT_EQ(shp(UOp::einsum("ij,jk->ik", std::vector<UOp>{f23(), P(4, dtypes::float32, {3, 4})})), (V{2, 4}));
  EXPECT_EQ(shp(UOp::arange(2, 11, 3)), (V{3}));
  EXPECT_EQ(shp(UOp::arange(1.5, -1, -0.5)), (V{5}));
  EXPECT_EQ(shp(UOp::eye(2, 4)), (V{2, 4}));
}

TEST(MixinDtypes, PromotionAndAccumulation) {
  EXPECT_EQ((i23() + 1.5).dtype(), dtypes::weakfloat) << "int and a python float: weak until committed";
  EXPECT_EQ((i23() + P(3, dtypes::float16, {3})).dtype(), dtypes::float16);
  EXPECT_EQ((i23() + 1).dtype(), dtypes::int32) << "a python int stays weak";
  EXPECT_EQ((P(3, dtypes::uint8, {2}) + P(4, dtypes::int8, {2})).dtype(), dtypes::int16);
  EXPECT_EQ((P(3, dtypes::bool_, {2}) + true).dtype(), dtypes::bool_);
  EXPECT_EQ((UOp::const_(3) + 2.5).dtype(), dtypes::weakfloat);
  EXPECT_EQ((i23() / 2).dtype(), dtypes::float32);
  EXPECT_EQ(i23().floordiv(2).dtype(), dtypes::int32);
  EXPECT_EQ(P(3, dtypes::float16, {2}).exp().dtype(), dtypes::float16);
  EXPECT_EQ(i23().exp().dtype(), dtypes::float32);
  EXPECT_EQ(i23().sum().dtype(), dtypes::int32);
  EXPECT_EQ(P(3, dtypes::int8, {2}).sum().dtype(), dtypes::int32);
  EXPECT_EQ(P(3, dtypes::uint8, {2}).sum().dtype(), dtypes::uint32);
  EXPECT_EQ(P(3, dtypes::bool_, {2}).sum().dtype(), dtypes::int32);
  EXPECT_EQ(P(3, dtypes::float16, {2}).sum().dtype(), dtypes::float16) << "accumulates in float32, casts back";
  EXPECT_EQ(P(3, dtypes::float16, {2}).sum(AxisArg(), false, dtypes::float32).dtype(), dtypes::float32);
  EXPECT_EQ(UOp::const_(3).sum().dtype(), dtypes::int32) << "a weak dtype commits before reducing";
  EXPECT_EQ(i23().mean().dtype(), dtypes::float32);
  EXPECT_EQ(i23().argmax().dtype(), dtypes::int32);
  EXPECT_EQ(UOp::arange(5).dtype(), dtypes::int32);
  EXPECT_EQ(UOp::arange((pyint)1 << 31, ((pyint)1 << 31) + 2).dtype(), dtypes::int64);
  EXPECT_EQ(UOp::arange(0, 1, 0.5).dtype(), dtypes::float32);
  EXPECT_EQ(i23().cast("HALF").dtype(), dtypes::float16);
  EXPECT_EQ(shp(P(3, dtypes::uint8, {4}).bitcast(dtypes::uint16)), (V{2})) << "a wider bitcast rescales the last axis";
  EXPECT_EQ(f23().element_size(), 4);
}

TEST(MixinApi, OperatorsArePythonOperators) {
  UOp x = f23(), y = i23();
  EXPECT_EQ(x + y, x.add(y));
  EXPECT_EQ(x + 1, x.add(1));
  EXPECT_EQ(1 + x, x.add(1, true));
  EXPECT_EQ(2 - x, x.sub(2, true));
  EXPECT_EQ(2.0 / x, x.div(2.0, true));
  EXPECT_EQ(x / y, x.div(y));
  EXPECT_EQ(x % 2, x.mod(2));
  EXPECT_EQ(3 < x, x.gt(3)) << "python swaps to the reflected comparison";
  EXPECT_EQ(x <= y, x.le(y));
  EXPECT_EQ(x >= 1, (x < 1).logical_not());
  EXPECT_EQ(-x, x * -1);
  EXPECT_EQ(~y, y ^ -1);
  EXPECT_EQ(y << 2, y.lshift(2));
  EXPECT_EQ(x.sub(y), UOp(Ops::ADD, DType(), {x, y.cast(dtypes::float32).neg()})) << "sub is a + -b";
  EXPECT_EQ(x.eq(y), x.ne(y).logical_not());
  EXPECT_EQ(x.add(2.5f), x.add(2.5)) << "a float literal is a python float";
  // usum/uprod pick OR/AND from self's dtype once, like functools.reduce with a fixed operator
  UOp b = P(3, dtypes::bool_, {2, 3});
  EXPECT_EQ(b.usum(std::vector<UOp>{y}), b.bitwise_or(y));
  EXPECT_EQ(b.usum(std::vector<UOp>{y, y}), b.bitwise_or(y).bitwise_or(y));
}

TEST(MixinApi, NoOpsReturnTheNodeItself) {
  UOp x = f23();
  EXPECT_EQ(x.reshape({2, 3}), x);
  EXPECT_EQ(x.reshape({-1, 3}), x);
  EXPECT_EQ(x.expand({2, 3}), x);
  EXPECT_EQ(x.expand({-1, std::nullopt}), x);
  EXPECT_EQ(x.permute({0, 1}), x);
  EXPECT_EQ(x.flip({}), x);
  EXPECT_EQ(x.pad({{0, 0}, std::nullopt}), x);
  EXPECT_EQ(x.shrink({std::nullopt, {0, 3}}), x);
  EXPECT_EQ(x.squeeze(0), x);
  EXPECT_EQ(x.cast(dtypes::float32), x);
  EXPECT_EQ(x.bitcast(dtypes::float32), x);
  EXPECT_EQ(x.repeat({1, 1}), x);
  EXPECT_EQ(x.sum(std::vector<int64_t>{}), x);
  EXPECT_EQ(x[{Ellipsis}], x.shrink({std::nullopt, std::nullopt}));
  EXPECT_EQ(x.contiguous(), x) << "no device: nothing to make contiguous";
  EXPECT_EQ(UOp::const_(2).contiguous(), UOp::const_(2));
  // hash-consing: the same expression is the same node
  EXPECT_EQ(x.softmax(0), f23().softmax(0));
  EXPECT_EQ(UOp::arange(600).cumsum(), UOp::arange(600).cumsum());
}

// a movement's shape args with every dim an int skip simplify (it would take a rewrite each): they must be what
// simplify makes of them. Shapes with repeated dims, ones, zeros, one dim and several
TEST(MixinApi, IntShapeArgsAreTheirSimplifiedForm) {
  auto simplified = [](const UOp& mv) {
    std::vector<UOp> args(mv.src().begin() + 1, mv.src().end());
    return UOp::sink(args).simplify().src();
  };
  auto check = [&](const UOp& g) {  // every movement with shape args in g
    int n = 0;
    for (const UOp& mv : g.toposort()) {
      if (mv.op() != Ops::RESHAPE && mv.op() != Ops::EXPAND && mv.op() != Ops::PAD && mv.op() != Ops::SHRINK) continue;
      n++;
      auto s = simplified(mv);
      ASSERT_EQ(s.size() + 1, mv.nsrc()) << mv.repr();
      for (size_t i = 0; i < s.size(); i++) EXPECT_EQ(s[i], mv.src(i + 1)) << mv.repr();
    }
    EXPECT_GT(n, 0) << g.repr();
  };
  UOp x = P(0, dtypes::float32, {4, 4, 1});
  for (Shape sh : std::vector<Shape>{{16}, {4, 4}, {2, 2, 2, 2}, {16, 1}, {1, 1, 16}, {1, 16, 1}}) check(x.reshape(sh));
  check(x.expand({4, 4, 4}));
  check(x.expand({4, 4, 7}));
  check(x.pad({{1, 1}, {0, 2}, {3, 3}}));
  check(x.pad({{1, 1}, {1, 1}, {1, 1}}));
  check(x.shrink({{1, 3}, {0, 4}, std::nullopt}));
  check(x.shrink({{2, 2}, {0, 0}, {0, 1}}));
  UOp z = P(1, dtypes::int32, {0, 3});
  check(z.reshape({3, 0}));
  check(z.pad({{0, 0}, {2, 2}}));
}

TEST(MixinApi, DevicesAndBuffers) {
  const char* old = std::getenv("DEV");
  std::string saved = old ? old : "";
  unsetenv("DEV");
  UOp e = UOp::empty({2, 3});
  EXPECT_EQ(e.device().as_str(), "CPU");
  EXPECT_TRUE(e.has_buffer_identity());
  EXPECT_EQ(e.addrspace(), AddrSpace::GLOBAL);
  EXPECT_NE((e + 1).contiguous(), e + 1) << "a computed value on a device becomes CONTIGUOUS";
  EXPECT_EQ(e.contiguous(), e);
  EXPECT_EQ(UOp::empty({4}, dtypes::int8, Arg("cpu:0")).device().as_str(), "CPU");
  setenv("DEV", "CL:OPENCL", 1);
  EXPECT_EQ(UOp::zeros({2}).device().as_str(), "CL") << "DEV's device part is the default device";
  if (old)
    setenv("DEV", saved.c_str(), 1);
  else
    unsetenv("DEV");
  UOp full = UOp::full({2, 3}, 42, DType(), Arg("CPU"));
  EXPECT_EQ(full.op(), Ops::AFTER);
  EXPECT_EQ(full.dtype(), dtypes::int32) << "the buffer commits the weak dtype";
  EXPECT_EQ(full.src(1).src(1).dtype(), dtypes::weakint) << "the stored value keeps the fill's weak dtype";
  UOp nobuf = UOp::full({2, 3}, 42, DType(), {}, false);
  EXPECT_EQ(nobuf.op(), Ops::EXPAND);
  EXPECT_TRUE(nobuf.device().is_none());
  EXPECT_TRUE(f23().device().is_none());
  EXPECT_EQ(f23().addrspace(), AddrSpace::GLOBAL);
  EXPECT_FALSE(UOp::arange(3).addrspace().has_value());
  // a buffer (PARAM) indexes into INDEX, a computed value takes the mixin's view path
  EXPECT_EQ(f23()[{1}].op(), Ops::INDEX);
  EXPECT_EQ(UOp::arange(6).reshape({2, 3})[{1}].op(), Ops::RESHAPE);
}

TEST(MixinApi, SymbolicShapes) {
  UOp n = UOp::variable("n", 1, 10);
  UOp x = P(3, dtypes::float32, {n, 3});
  EXPECT_TRUE(x.shape()[0].u() == n);
  EXPECT_EQ(x.reshape({-1}).shape().size(), 1u);
  EXPECT_EQ(x.sum(0).shape().size(), 1u);
  EXPECT_EQ(x.max_shape(), (std::vector<pyint>{10, 3}));
  EXPECT_EQ(shp(x.shrink({{0, 1}, std::nullopt})), (V{1, 3}));
  UOp e = P(4, dtypes::float32, {1, 3}).expand({n, 3});
  EXPECT_TRUE(e.shape()[0].u() == n);
  expect_error([&] { x.split(1, 0); }, {"split", "symbolic"});
}

// ***** transcribed from the reference's test/null/test_uop_graph.py *****

namespace {
UOp local_placeholder(Shape shape) { return UOp::placeholder(shape, dtypes::float16, 0, AddrSpace::LOCAL); }
using S = Index;
}  // namespace

TEST(TestUOpGetItem, FullAndPartialSlices) {
  EXPECT_EQ(shp(local_placeholder({64, 64})[{S::slice(), S::slice()}]), (V{64, 64}));  // test_full_slice
  EXPECT_EQ(shp(local_placeholder({64, 64})[{S::slice(0, 64), S::slice(0, 64)}]),
            (V{64, 64}));  // test_full_slice_explicit
  EXPECT_EQ(shp(local_placeholder({64, 80})[{S::slice(), S::slice(std::nullopt, 64)}]),
            (V{64, 64}));  // test_shrink_cols
  EXPECT_EQ(shp(local_placeholder({80, 64})[{S::slice(std::nullopt, 64), S::slice()}]),
            (V{64, 64}));  // test_shrink_rows
  EXPECT_EQ(shp(local_placeholder({80, 80})[{S::slice(std::nullopt, 64), S::slice(std::nullopt, 64)}]), (V{64, 64}));
  EXPECT_EQ(shp(local_placeholder({64, 64})[{S::slice(8), S::slice()}]), (V{56, 64}));  // test_shrink_start
  EXPECT_EQ(shp(local_placeholder({64, 64})[{S::slice(8, 56), S::slice(4, 60)}]), (V{48, 56}));
}

TEST(TestUOpGetItem, MixedSliceAndIndex) {
  UOp r = UOp::range(64, 100);
  EXPECT_EQ(shp(local_placeholder({64, 80})[{r, S::slice(std::nullopt, 64)}]), (V{64}));  // test_index_and_slice
  EXPECT_EQ(shp(local_placeholder({80, 64})[{S::slice(std::nullopt, 64), r}]), (V{64}));  // test_slice_and_index
  UOp s = local_placeholder({64, 80})[{S::slice(), S::slice(std::nullopt, 64)}];          // test_shrink_then_index
  EXPECT_EQ(shp(s[{r}]), (V{64}));
  EXPECT_EQ(shp(local_placeholder({64, 64})[{0}]), (V{64}));  // test_int_index
}

TEST(TestUOpGetItem, Ellipsis) {
  EXPECT_EQ(shp(local_placeholder({64, 80})[{Ellipsis, S::slice(std::nullopt, 64)}]), (V{64, 64}));
  EXPECT_EQ((local_placeholder({64, 80})[{Ellipsis, UOp::range(64, 100)}].op()), Ops::INDEX);  // test_ellipsis_with_int
  EXPECT_EQ(shp(local_placeholder({64, 64})[{Ellipsis}]), (V{64, 64}));
}

TEST(TestUOpGetItem, AllSlicesMakeNoIndex) {
  EXPECT_NE((local_placeholder({64, 80})[{S::slice(), S::slice(std::nullopt, 64)}].op()), Ops::INDEX);
  EXPECT_NE((local_placeholder({64, 64})[{S::slice(), S::slice()}].op()), Ops::INDEX);
}

TEST(TestUOpBroadcast, ImplicitBroadcastInAlu) {
  UOp a = UOp::const_(1.0).expand({4, 8});
  UOp c = a + UOp::const_(2.0).expand({4, 1});  // test_broadcast_row
  EXPECT_EQ(shp(c), (V{4, 8}));
  EXPECT_EQ(c.op(), Ops::ADD);
  c = a + UOp::const_(2.0).expand({1, 8});  // test_broadcast_col
  EXPECT_EQ(shp(c), (V{4, 8}));
  EXPECT_EQ(c.op(), Ops::ADD);
  c = a * UOp::const_(2.0).expand({8});  // test_broadcast_lower_dim
  EXPECT_EQ(shp(c), (V{4, 8}));
  EXPECT_EQ(c.op(), Ops::MUL);
  c = a * 2;  // test_broadcast_scalar
  EXPECT_EQ(shp(c), (V{4, 8}));
  EXPECT_EQ(c.op(), Ops::MUL);
  UOp t = UOp::variable("t", 1, 10);  // test_broadcast_symbolic_same_shape
  EXPECT_EQ((UOp::const_(1.0).expand({1, 1, t}) + UOp::const_(2.0).expand({1, 1, t})).op(), Ops::ADD);
}

TEST(TestUOpBroadcast, BroadcastAxes) {
  UOp t = UOp::variable("t", 1, 10);
  EXPECT_EQ(broadcast_axes({4, 8}, {4, 8}), V{});
  EXPECT_EQ(broadcast_axes({8}, {4, 8}), (V{0}));
  EXPECT_EQ(broadcast_axes({}, {4, 8}), (V{0, 1}));
  EXPECT_EQ(broadcast_axes({3, 1}, {4, 3, 8}), (V{0, 2}));
  EXPECT_EQ(broadcast_axes({1, 8}, {1, 8}), V{});
  EXPECT_EQ(broadcast_axes({t, 8}, {t, 8}), V{});
  EXPECT_EQ(broadcast_axes({1, 8}, {t, 8}), (V{0}));
  EXPECT_THROW(broadcast_axes({4, 8}, {8}), Error);
}
