// Unit tests of lib/codegen transcribed from the reference:
//   test/null/test_gpudims.py            get_grouped_dims (z3 bijectivity proof -> exhaustive check), global_prod_max
//   test/null/test_transcendental_helpers.py  payne_hanek / cody_waite / frexp / rintk / pow2if, evaluated by running
//                                        a one-store kernel in the interpreter (the reference's eval_uop)
//   test/null/test_linearizer_rewrite.py and test/backend/test_linearizer.py: the kernels are built with Tensor in the
//                                        reference; their ASTs come from tests/data/codegen_unit_asts.txt
//                                        (gen_codegen_unit_asts.py) and each test's assertions are transcribed
//   test/backend/test_linearizer_dumb.py  the METAL GROUP_REDUCE kernel, built with UOps, lowers on a has_local target
// plus the Scheduler's KernelOptError checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>

#include "backends/interp/interp.h"
#include "lib/codegen/codegen.h"
#include "lib/codegen/decomp/transcendental.h"
#include "lib/codegen/gpudims.h"
#include "lib/codegen/late/coalesce.h"
#include "lib/codegen/late/program.h"
#include "lib/codegen/opt/heuristic.h"
#include "lib/codegen/opt/postrange.h"
#include "lib/renderer/cstyle.h"
#include "lib/schedule/rangeify.h"
#include "lib/uop/kernel_info.h"
#include "lib/uop/serialize.h"
#include "lib/uop/symbolic.h"
#include "lib/uop/weak.h"
#include "tests/support/golden_file.h"
#include "tests/unit/random_movement.h"

using namespace tg;

namespace {

const Target kClang{"CPU", "CLANG", "x86_64,native", "", ""};

const ClangRenderer& clang_ren() {
  static ClangRenderer r = [] {
    ClangRenderer x(kClang);
    x.global_max = std::vector<pyint>{8, 0, 0};
    return x;
  }();
  return r;
}
// the GPU-like target of the goldens: ClangRenderer with locals, without threads
const ClangRenderer& local_ren() {
  static ClangRenderer r = [] {
    ClangRenderer x(kClang);
    x.has_local = true;
    x.has_threads = false;
    x.global_max = std::vector<pyint>{0x8FFFFFFF, 0x8FFFFFFF, 0x8FFFFFFF};
    return x;
  }();
  return r;
}

// ************************* get_grouped_dims *************************

// value of an index expression over weakint SPECIALs
pyint eval_idx(const UOp& u, const std::map<std::string, pyint>& sp) {
  switch (u.op()) {
    case Ops::CONST:
      return u.val().as_int();
    case Ops::SPECIAL:
      return sp.at(u.arg().as_str());
    case Ops::ADD:
      return eval_idx(u.src(0), sp) + eval_idx(u.src(1), sp);
    case Ops::MUL:
      return eval_idx(u.src(0), sp) * eval_idx(u.src(1), sp);
    case Ops::FLOORDIV:
      return floordiv(eval_idx(u.src(0), sp), eval_idx(u.src(1), sp));
    case Ops::FLOORMOD:
      return floormod(eval_idx(u.src(0), sp), eval_idx(u.src(1), sp));
    default:
      throw Error(std::string("eval_idx: ") + op_name(u.op()));
  }
}

std::vector<UOp> specials_of(const std::vector<UOp>& idxs) {
  std::vector<UOp> r;
  for (const UOp& x : idxs)
    for (const UOp& y : x.toposort())
      if (y.op() == Ops::SPECIAL && std::find(r.begin(), r.end(), y) == r.end()) r.push_back(y);
  std::sort(r.begin(), r.end(), [](const UOp& a, const UOp& b) { return a.arg().as_str() < b.arg().as_str(); });
  return r;
}

void check_grouped_dims(const std::string& prefix, const std::vector<sint>& dims,
                        const std::optional<std::vector<pyint>>& max_sizes, bool reverse,
                        const std::vector<pyint>& expected, bool assert_same_length = true) {
  SCOPED_TRACE("dims of size " + std::to_string(dims.size()));
  std::vector<UOp> idxs = get_grouped_dims(prefix, dims, max_sizes, reverse);
  std::vector<UOp> loop = specials_of(idxs);
  std::vector<pyint> sizes;
  for (const UOp& x : loop) sizes.push_back(x.src(0).val().as_int());
  ASSERT_EQ(idxs.size(), dims.size());
  if (assert_same_length) {
    EXPECT_EQ(loop.size(), std::min(sizes.size(), dims.size()));
  }
  EXPECT_EQ(sizes, expected);
  // bijectivity (the reference proves it with z3): every launch index maps to a distinct flat index in [0, total)
  pyint total = 1;
  for (const sint& d : dims) total *= d.i();
  std::vector<bool> seen((size_t)total, false);
  std::vector<pyint> cur(loop.size(), 0);
  size_t count = 0;
  while (true) {
    std::map<std::string, pyint> sp;
    for (size_t i = 0; i < loop.size(); i++) sp[loop[i].arg().as_str()] = cur[i];
    pyint flat = 0, stride = total;
    for (size_t i = 0; i < idxs.size(); i++) {
      stride /= dims[i].i();
      flat += eval_idx(idxs[i], sp) * stride;
    }
    ASSERT_TRUE(flat >= 0 && flat < total) << "flat index out of range";
    ASSERT_FALSE(seen[(size_t)flat]) << "not injective";
    seen[(size_t)flat] = true;
    count++;
    size_t k = loop.size();
    while (k > 0 && ++cur[k - 1] == sizes[k - 1]) cur[--k] = 0;
    if (k == 0) break;
  }
  EXPECT_EQ((pyint)count, total);
}

using V = std::vector<pyint>;
using S = std::vector<sint>;

}  // namespace

TEST(GroupedDims, GroupedDims) {
  // no-op
  check_grouped_dims("gidx", S{2}, V{16, 16, 16}, false, V{2});
  check_grouped_dims("gidx", S{2, 3}, V{16, 16, 16}, false, V{2, 3});
  // check reverse dims
  check_grouped_dims("gidx", S{2, 3}, V{16, 16, 16}, true, V{3, 2});
  check_grouped_dims("gidx", S{2, 3, 4}, V{16, 16, 16}, false, V{2, 3, 4});
  // test splitting globals:    len(dims) == len(max)
  check_grouped_dims("gidx", S{64, 3, 4}, V{16, 16, 16}, false, V{16, 12, 4});
  check_grouped_dims("gidx", S{64, 3, 4}, V{16, 4, 16}, false, V{16, 3, 16});
  check_grouped_dims("gidx", S{64, 3, 4}, V{16, 16, 16}, true, V{16, 3, 16});
  check_grouped_dims("gidx", S{128, 3, 4}, V{16, 4, 256}, false, V{16, 3, 32});
  check_grouped_dims("gidx", S{4, 4, 512}, V{16, 4, 256}, false, V{8, 4, 256});
  check_grouped_dims("gidx", S{5, 12, 7}, V{8, 4, 16}, false, V{10, 3, 14});
  // prefer group_dim strategy when possible
  check_grouped_dims("gidx", S{512, 4, 2}, V{8192, 2, 2}, false, V{2048, 2});
  // test splitting globals:    len(dims) < len(max)
  check_grouped_dims("gidx", S{128}, V{16, 16, 256}, false, V{16, 8}, false);
  check_grouped_dims("gidx", S{65536}, V{16, 16, 256}, false, V{16, 16, 256}, false);
  check_grouped_dims("gidx", S{65536, 2}, V{65535, 65535, 65535}, false, V{32768, 4}, false);
  // test when the only divisor is the square root of dim
  check_grouped_dims("gidx", S{121}, V{12, 12, 12}, false, V{11, 11}, false);
  check_grouped_dims("gidx", S{128, 128}, V{16, 16, 256}, false, V{16, 16, 64}, false);
  // collapse on onto the left most axis
  check_grouped_dims("gidx", S{2, 3, 4, 5}, V{16, 16, 16}, false, V{6, 4, 5});
  check_grouped_dims("gidx", S{2, 3, 4, 5}, V{32, 16, 16}, true, V{20, 3, 2});
  // collapse on left-most available axis (the left most is too small)
  check_grouped_dims("gidx", S{2, 3, 4, 5}, V{4, 16, 16}, false, V{2, 12, 5});
  check_grouped_dims("gidx", S{2, 3, 4, 5}, V{16, 16, 16}, true, V{5, 12, 2});
  // dim too large and not factorable
  EXPECT_THROW(get_grouped_dims("gidx", S{23}, V{16, 16, 16}, false), Error);
  EXPECT_THROW(get_grouped_dims("gidx", S{128, 3, 4}, V{16, 2, 2}, false), Error);
  // too large for sizes
  EXPECT_THROW(get_grouped_dims("gidx", S{2, 3, 4, 5, 6}, V{16, 16, 16}), Error);
}

TEST(GroupedDims, DirectDimsAreSpecial) {
  // when (2,3) are merged into 6, the unmerged dims (4,5) map directly to SPECIAL ops (no div/mod)
  auto idxs = get_grouped_dims("gidx", S{2, 3, 4, 5}, V{16, 16, 16}, false);
  EXPECT_EQ(idxs[2].op(), Ops::SPECIAL);
  EXPECT_EQ(idxs[3].op(), Ops::SPECIAL);
}

TEST(GroupedDims, HighRank) {
  // 4D collapsed onto 2 axes
  check_grouped_dims("gidx", S{4, 4, 4, 4}, V{16, 16}, false, V{16, 16});
  // 4D untouched
  check_grouped_dims("gidx", S{2, 3, 4, 5}, std::nullopt, false, V{2, 3, 4, 5});
  for (const UOp& u : get_grouped_dims("gidx", S{2, 3, 4, 5}, std::nullopt, false)) EXPECT_EQ(u.op(), Ops::SPECIAL);
  // 5D and 6D collapsed onto 3 axes
  check_grouped_dims("gidx", S{2, 2, 2, 2, 2}, V{4, 4, 4}, false, V{4, 4, 2});
  check_grouped_dims("gidx", S{2, 2, 2, 2, 2, 2}, V{8, 8, 8}, false, V{8, 4, 2});
}

TEST(GroupedDims, MaxSizesNone) {
  check_grouped_dims("gidx", S{2, 3, 4}, std::nullopt, false, V{2, 3, 4});
  check_grouped_dims("gidx", S{100}, std::nullopt, false, V{100});
}

TEST(GroupedDims, GlobalProdMax) {
  UOp g = UOp::range(256, 0, AxisType::GLOBAL), l = UOp::range(256, 1, AxisType::LOCAL);
  UOp st = UOp::param(0, dtypes::float32, Shape{512}).index(g + l).store(UOp::const_(PyConst(1.0)));
  UOp sink = UOp::sink({st.end(std::vector<UOp>{g, l})}, KernelInfo().to_arg());
  Renderer r(Target{});
  r.global_max = V{256, 256, 256};
  r.local_max = V{128, 128, 128};
  r.global_prod_max = V{128, 128, 128};
  UOp out = graph_rewrite(sink, pm_add_gpudims(), {.ctx = static_cast<const Renderer*>(&r)});
  int nl = 0, ng = 0;
  for (const UOp& u : out.toposort())
    if (u.op() == Ops::SPECIAL) (u.arg().as_str().find("lidx") != std::string::npos ? nl : ng)++;
  EXPECT_GT(nl, 1);
  EXPECT_GT(ng, 1);
}

// ************************* transcendental helpers *************************
namespace {
// test/helpers.eval_uop: store the value from a one-element kernel and read it back (inputs are PARAMs 1..n)
PyConst eval_uop(const UOp& u, const std::vector<std::pair<DType, std::vector<PyConst>>>& inputs = {}) {
  UOp g = UOp::param(0, u.dtype(), Shape{1});
  UOp sink = UOp::sink({g.index(UOp::const_(PyConst(0))).store(u)}, KernelInfo().to_arg());
  UOp prg = to_program(sink, clang_ren());
  std::vector<std::vector<uint8_t>> mem;
  mem.emplace_back((size_t)u.dtype().itemsize(), 0);
  for (const auto& [dt, vals] : inputs) {
    std::vector<uint8_t> b(vals.size() * (size_t)dt.itemsize());
    for (size_t i = 0; i < vals.size(); i++) interp::store_scalar(b.data() + i * (size_t)dt.itemsize(), dt, vals[i]);
    mem.push_back(b);
  }
  std::vector<interp::BufferView> views{{mem[0].data(), 1, u.dtype()}};
  for (size_t i = 0; i < inputs.size(); i++)
    views.push_back({mem[i + 1].data(), inputs[i].second.size(), inputs[i].first});
  interp::run_program(prg, views);
  return interp::load_scalar(mem[0].data(), u.dtype());
}
double evf(const UOp& u, const std::vector<std::pair<DType, std::vector<PyConst>>>& inputs = {}) {
  return eval_uop(u, inputs).as_float();
}
pyint evi(const UOp& u, const std::vector<std::pair<DType, std::vector<PyConst>>>& inputs = {}) {
  return eval_uop(u, inputs).as_int();
}
UOp cf(double v, DType dt) { return UOp::const_(PyConst(v)).cast(dt); }
UOp ci(pyint v, DType dt) { return UOp::const_(PyConst(v)).cast(dt); }
}  // namespace

TEST(TranscendentalHelpers, PayneHanekReduction) {
  // load the input from a buffer to prevent constant folding
  UOp loaded = UOp::param(1, dtypes::float64, Shape{1}).index(UOp::const_(PyConst(0))).load();
  auto run = [&](double v) {
    auto [r, q] = payne_hanek_reduction(loaded);
    return std::make_pair(evf(r, {{dtypes::float64, {PyConst(v)}}}), evi(q, {{dtypes::float64, {PyConst(v)}}}));
  };
  auto [r1, q1] = run(12 * M_PI + 0.1);
  EXPECT_NEAR(r1, 0.1 - M_PI / 2, 1e-7 * std::fabs(0.1 - M_PI / 2));
  EXPECT_EQ(q1, 1);
  auto [r2, q2] = run(12 * M_PI);
  EXPECT_NEAR(r2, 0.0, 1e-8);
  EXPECT_EQ(q2, 4);
  auto [r3, q3] = run(12 * M_PI - 0.1);
  EXPECT_NEAR(r3, -0.1, 1e-7 * 0.1);
  EXPECT_EQ(q3, 4);
}

TEST(TranscendentalHelpers, CodyWaiteReduction) {
  auto [r, q] = cody_waite_reduction(cf(12 * M_PI + 0.1, dtypes::float64));
  EXPECT_NEAR(evf(r), 0.1, 1e-7 * 0.1);
  EXPECT_EQ(evi(q), 12);
}

TEST(TranscendentalHelpers, Frexp) {
  for (double x : {1.0, -1.0}) {
    auto [m, e] = frexp(cf(x, dtypes::float64));
    EXPECT_EQ(evf(m), 0.5);
    EXPECT_EQ(evi(e), 1);
  }
  for (int i = 0; i < 2; i++) {  // the reference passes 2.0 for both 2 and -2
    auto [m, e] = frexp(cf(2.0, dtypes::float64));
    EXPECT_EQ(evf(m), 0.5);
    EXPECT_EQ(evi(e), 2);
  }
  auto [m5, e5] = frexp(cf(5.0, dtypes::float64));
  EXPECT_EQ(evf(m5), 0.625);
  EXPECT_EQ(evi(e5), 3);
  auto [m1k, e1k] = frexp(cf(1000.0, dtypes::float64));
  EXPECT_NEAR(evf(m1k), 0.9765625, 1e-7);
  EXPECT_EQ(evi(e1k), 10);
}

TEST(TranscendentalHelpers, Rintk) {
  std::vector<std::pair<double, pyint>> cases{{0.0, 0},   {5.0, 5},   {5.5, 6},    {5.999, 6},
                                              {-5.0, -5}, {-5.5, -6}, {-5.999, -6}};
  for (auto [v, want] : cases) EXPECT_EQ(evi(rintk(cf(v, dtypes::float32))), want) << v;
}

TEST(TranscendentalHelpers, Pow2if) {
  std::vector<std::pair<pyint, double>> cases{{0, 1.0},
                                              {1, 2.0},
                                              {2, 4.0},
                                              {10, 1024.0},
                                              {63, std::ldexp(1.0, 63)},
                                              {-1, 0.5},
                                              {-2, 0.25},
                                              {-10, std::ldexp(1.0, -10)},
                                              {-63, std::ldexp(1.0, -63)}};
  for (auto [q, want] : cases)
    EXPECT_NEAR(evf(pow2if(ci(q, dtypes::int32), dtypes::float32)), want, 1e-7 * want) << (int64_t)q;
}

// ************************* linearizer tests on the reference's ASTs *************************
namespace {
struct UnitCase {
  std::string name, ren;
  UOp ast, sink, program;
};
const std::map<std::string, UnitCase>& unit_cases() {
  static const std::map<std::string, UnitCase> m = [] {
    std::map<std::string, UnitCase> r;
    test::GoldenFile f(TG_TEST_DATA "/codegen_unit_asts.txt", test::GoldenFile::kNodePool);
    UnitCase* c = nullptr;
    while (f.next()) {
      if (f.is("case")) {  // case <name> <renderer>
        f.clear_pool();
        std::vector<std::string> w = f.words();
        if (w.size() != 3) f.fail("expected: case <name> <renderer>");
        c = &r[w[1]];
        c->name = w[1];
        c->ren = w[2];
        continue;
      }
      if (!c) f.fail("a record before the first case");
      if (f.is("ast"))
        c->ast = f.node(f.rest());
      else if (f.is("sink"))
        c->sink = f.node(f.rest());
      else if (f.is("program"))
        c->program = f.node(f.rest());
      else
        f.unknown();
    }
    return r;
  }();
  return m;
}

struct Lowered {
  UOp sink;
  std::vector<UOp> uops;
  std::string source;
  const ProgramInfo* info = nullptr;
  UOp prg;
};
// to_program(ast, renderer): the program's linear uops (and, like every case here, the reference's SINK and program)
Lowered lower_case(const std::string& name) {
  const UnitCase& c = unit_cases().at(name);
  const Renderer& ren = c.ren == "local" ? static_cast<const Renderer&>(local_ren()) : clang_ren();
  Lowered l;
  if (c.ren == "local") {
    l.sink = full_rewrite_to_sink(c.ast, ren, c.ast.tag().is_none());
    l.uops = do_linearize(l.sink);
  } else {
    l.prg = to_program(c.ast, ren);
    l.sink = l.prg.src(0);
    l.uops = std::vector<UOp>(l.prg.src(1).src().begin(), l.prg.src(1).src().end());
    l.source = l.prg.src(2).arg().as_str();
    l.info = l.prg.arg().as<ProgramInfo>();
  }
  EXPECT_EQ(l.sink, c.sink) << name << ": SINK differs from the reference's";
  EXPECT_EQ(UOp(Ops::LINEAR, dtypes::void_, l.uops), c.program) << name << ": program differs from the reference's";
  return l;
}
std::vector<size_t> positions(const std::vector<UOp>& uops, Ops op) {
  std::vector<size_t> r;
  for (size_t i = 0; i < uops.size(); i++)
    if (uops[i].op() == op) r.push_back(i);
  return r;
}
size_t count_if(const std::vector<UOp>& uops, const std::function<bool(const UOp&)>& f) {
  return (size_t)std::count_if(uops.begin(), uops.end(), f);
}
std::optional<AddrSpace> as_of(const UOp& u) { return u.addrspace(); }
bool is_reg_buffer(const UOp& u) { return u.op() == Ops::BUFFER && as_of(u) == AddrSpace::REG; }
}  // namespace

// every case: our SINK and program are the reference's (lower_case checks), opts included
TEST(Linearizer, EveryCaseIsTheReferences) {
  for (const auto& [name, c] : unit_cases()) {
    SCOPED_TRACE(name);
    lower_case(name);
  }
  EXPECT_GE(unit_cases().size(), 32u);
}
TEST(Linearizer, SwapAndNolocals) {
  // SWAP exchanges the two global axes' numbers; NOLOCALS launches with global dims only (idx0, idx1)
  auto swapped = lower_case("swap_globals");
  EXPECT_EQ(swapped.sink.arg().as<KernelInfo>()->applied_opts.repr(), "(('SWAP', 0, 1),)");
  auto nl = lower_case("nolocals");
  bool idx = false, lidx = false;
  for (const UOp& u : nl.uops)
    if (u.op() == Ops::SPECIAL)
      idx |= u.arg().as_str().rfind("idx", 0) == 0, lidx |= u.arg().as_str().rfind("lidx", 0) == 0;
  EXPECT_TRUE(idx);
  EXPECT_FALSE(lidx);
  EXPECT_TRUE(nl.sink.arg().as<KernelInfo>()->dont_use_locals);
}

TEST(LinearizerRewrite, Reduction) {
  auto l = lower_case("rewrite_reduction");
  EXPECT_FALSE(l.source.empty());
  EXPECT_EQ(l.sink.arg().as<KernelInfo>()->applied_opts.repr(), "(('UPCAST', 0, 4), ('UNROLL', 0, 4))");
}
TEST(LinearizerRewrite, Arange) {
  auto l = lower_case("rewrite_arange");
  EXPECT_FALSE(l.source.empty());
}
TEST(LinearizerRewrite, KernelInfo) {
  auto l = lower_case("kernel_info_no_opts");
  EXPECT_TRUE(l.sink.arg().as<KernelInfo>()->applied_opts.items().empty()) << "expected no opts";
  auto c = lower_case("kernel_info_custom_name");
  EXPECT_EQ(c.info->name, "custom");
}

TEST(Linearizer, TwoNestedRange) { EXPECT_EQ(positions(lower_case("two_nested_range").uops, Ops::RANGE).size(), 1u); }
TEST(Linearizer, ThreeNestedRange) {
  EXPECT_EQ(positions(lower_case("three_nested_range").uops, Ops::RANGE).size(), 1u);
}
TEST(Linearizer, TwoNestedRangeAltIndexing) {
  auto uops = lower_case("two_nested_range_alt_indexing").uops;
  auto ranges = positions(uops, Ops::RANGE);
  ASSERT_GE(ranges.size(), 2u);
  // RANGE -> ALU -> RANGE -> ALU + LOAD -> STORE
  std::vector<UOp> mid(uops.begin() + (long)ranges[0], uops.begin() + (long)ranges[1]),
      after(uops.begin() + (long)ranges[1], uops.end());
  EXPECT_TRUE(count_if(mid, [](const UOp& x) { return GroupOp::ALU.has(x.op()); }));
  // the index of the load doesnt depend on the second range
  EXPECT_TRUE(count_if(mid, [](const UOp& x) { return x.op() == Ops::LOAD; }));
  EXPECT_TRUE(count_if(after, [](const UOp& x) { return GroupOp::ALU.has(x.op()) || x.op() == Ops::LOAD; }));
}
TEST(Linearizer, RangeOuterOpBeforePhi) {
  auto uops = lower_case("range_outer_op_before_phi").uops;
  auto ranges = positions(uops, Ops::RANGE);
  ASSERT_FALSE(ranges.empty());
  // LOAD -> RANGE -> LOAD -> STORE
  std::vector<UOp> before(uops.begin(), uops.begin() + (long)ranges[0]);
  EXPECT_EQ(count_if(before, [](const UOp& x) { return x.op() == Ops::LOAD; }), 1u);
}
TEST(Linearizer, RangeOuterOpBeforePhiNestedRange) {
  EXPECT_EQ(positions(lower_case("range_outer_op_before_phi_nested_range").uops, Ops::RANGE).size(), 1u);
}
TEST(Linearizer, LoadDedup) {
  size_t n = positions(lower_case("load_dedup").uops, Ops::LOAD).size();
  EXPECT_LE(n, 4u) << "more load uops than needed";
  EXPECT_GE(n, 1u) << "expected at least one load uop";
}
TEST(Linearizer, ReduceUpcast) {
  auto uops = lower_case("reduce_upcast").uops;
  EXPECT_EQ(count_if(uops, is_reg_buffer), 0u);  // it's removed now
  EXPECT_EQ(positions(uops, Ops::STORE).size(), 1u);
}
TEST(Linearizer, UpcastWithLocals) {
  auto uops = lower_case("upcast_with_locals").uops;
  std::vector<UOp> stores;
  for (const UOp& u : uops)
    if (u.op() == Ops::STORE && as_of(u.src(0)) != AddrSpace::REG) stores.push_back(u);
  ASSERT_GE(stores.size(), 2u);
  // the first store is to lds and can be upcasted
  EXPECT_EQ(stores[0].src(1).max_numel(), 4);
  bool local = false;
  for (const UOp& x : stores[0].toposort()) local |= as_of(x) == AddrSpace::LOCAL;
  EXPECT_TRUE(local);
  // the second store is to gds with no upcasts
  EXPECT_EQ(stores[1].src(1).max_numel(), 1);
  EXPECT_EQ(stores[1].src(1).dtype(), dtypes::float32);
  bool param = false;
  for (const UOp& x : stores[1].toposort()) param |= x.op() == Ops::PARAM;
  EXPECT_TRUE(param);
}
TEST(Linearizer, ZeroFold) {
  EXPECT_EQ(count_if(lower_case("zero_fold").uops, [](const UOp& x) { return GroupOp::ALU.has(x.op()); }), 0u)
      << "more alu uops than needed";
}
TEST(Linearizer, SumAccDtype) {
  std::vector<std::pair<std::string, DType>> cases{{"sum_acc_dtype_bool", dtypes::int32},
                                                   {"sum_acc_dtype_short", dtypes::int32},
                                                   {"sum_acc_dtype_half", dtypes::float32},
                                                   {"sum_acc_dtype___bf16", dtypes::float32}};
  for (const auto& [name, acc] : cases) {
    auto uops = lower_case(name).uops;
    std::vector<UOp> local;
    for (const UOp& u : uops)
      if (u.op() == Ops::BUFFER && (as_of(u) == AddrSpace::LOCAL || as_of(u) == AddrSpace::REG)) local.push_back(u);
    ASSERT_FALSE(local.empty()) << name;
    EXPECT_EQ(local[0].dtype(), acc) << name;
  }
}
TEST(Linearizer, ArgAccDtype) {
  std::vector<std::pair<std::string, DType>> cases{{"arg_acc_dtype_sum_f16", dtypes::float16},
                                                   {"arg_acc_dtype_matmul_f16", dtypes::float16},
                                                   {"arg_acc_dtype_matmul", dtypes::float32}};
  for (const auto& [name, want] : cases) {
    auto uops = lower_case(name).uops;
    std::vector<UOp> local;
    for (const UOp& u : uops)
      if (u.op() == Ops::BUFFER && (as_of(u) == AddrSpace::LOCAL || as_of(u) == AddrSpace::REG)) local.push_back(u);
    ASSERT_FALSE(local.empty()) << name;
    EXPECT_EQ(local[0].dtype(), want) << name;
  }
}
TEST(Linearizer, SimpleUnrollNoBetweenPhiDependencies) {
  auto uops = lower_case("simple_unroll_no_between_phi_dependencies").uops;
  // the uops graph is reg BUFFER -> 4x STORE 0.0 -> RANGE -> 4x ALU -> 4x STORE -> ENDRANGE
  size_t begin_range = positions(uops, Ops::RANGE).back(), end_range = positions(uops, Ops::END).front();
  for (size_t i = 0; i < uops.size(); i++) {
    const UOp& u = uops[i];
    if (u.op() == Ops::STORE && as_of(u.src(0)) == AddrSpace::REG) {
      if (i < begin_range)
        EXPECT_FALSE(GroupOp::ALU.has(u.src(1).op()));
      else {
        EXPECT_TRUE(GroupOp::ALU.has(u.src(1).op()));
        EXPECT_TRUE(begin_range < i && i < end_range);
      }
    }
    // children of END are placed after ENDRANGE
    for (const UOp& x : u.src())
      if (x.op() == Ops::END && GroupOp::ALU.has(x.src(1).op())) {
        EXPECT_LT(end_range, i);
      }
  }
}
TEST(Linearizer, DefaultGlobalReversed) {
  auto uops = lower_case("default_global_reversed").uops;
  std::vector<UOp> idxs;
  for (const UOp& u : uops)
    if (u.op() == Ops::SPECIAL && std::find(idxs.begin(), idxs.end(), u) == idxs.end()) idxs.push_back(u);
  std::sort(idxs.begin(), idxs.end(), [](const UOp& a, const UOp& b) { return a.arg().as_str() < b.arg().as_str(); });
  ASSERT_EQ(idxs.size(), 3u);
  std::vector<std::pair<std::string, pyint>> want{{"gidx0", 6}, {"gidx1", 5}, {"gidx2", 4}};
  for (size_t i = 0; i < 3; i++) {
    EXPECT_EQ(idxs[i].arg().as_str(), want[i].first);
    EXPECT_EQ(idxs[i].src(0).src(0).val().as_int(), want[i].second);
  }
}
TEST(Linearizer, WhereFold) {
  EXPECT_EQ(positions(lower_case("where_fold").uops, Ops::WHERE).size(), 0u)
      << "found where where where should be folded";
}
TEST(Linearizer, PhiSimplification) {
  for (const char* name :
       {"phi_simplification_arange_float", "phi_simplification_arange_neg", "phi_simplification_arange_255"}) {
    SCOPED_TRACE(name);
    auto uops = lower_case(name).uops;
    // ignore kernel optimized IF statements for now
    auto ifs = positions(uops, Ops::IF);
    if (!ifs.empty()) uops.resize(ifs[0]);
    bool has_range = !positions(uops, Ops::RANGE).empty(), has_special = !positions(uops, Ops::SPECIAL).empty();
    EXPECT_TRUE(has_range != has_special) << "has either specials or ranges, not both";
    EXPECT_EQ(count_if(uops, [](const UOp& u) { return u.op() == Ops::STORE && as_of(u.src(0)) == AddrSpace::REG; }),
              0u)
        << "STORE to reg should have been simplified";
    EXPECT_LE(positions(uops, Ops::MAX).size(), 2u) << "no unnecessary MAX ops";
  }
}
TEST(Linearizer, GroupedStoreLocalsAndGlobals) {
  auto uops = lower_case("grouped_store_locals_and_globals").uops;
  std::vector<UOp> stores;
  for (const UOp& u : uops)
    if (u.op() == Ops::STORE && (as_of(u) == AddrSpace::LOCAL || as_of(u) == AddrSpace::GLOBAL)) stores.push_back(u);
  EXPECT_EQ(positions(uops, Ops::BARRIER).size(), 1u);
  // check that the float4 cast collapses for all stores
  for (const UOp& s : stores) EXPECT_GT(s.src(1).max_numel(), 1);
  EXPECT_FALSE(positions(uops, Ops::IF).empty());
}
TEST(Linearizer, TwoGroupedStoresLocal) {
  // GROUP on both reduces puts two LOCAL buffers in one kernel, and the store to each needs its own barrier
  EXPECT_EQ(positions(lower_case("two_grouped_stores_local").uops, Ops::BARRIER).size(), 2u);
}

// test/backend/test_linearizer_dumb.py (METAL there): a kernel with a GROUP_REDUCE range and an applied GROUP opt
TEST(LinearizerDumb, FailureBeamMnist) {
  auto c = [](pyint v) { return UOp::const_(PyConst(v)); };
  UOp c0 = UOp::param(0, dtypes::uint8, Shape{4014080});
  UOp c1 = UOp::range(c(512), 0, AxisType::GLOBAL), c2 = UOp::range(c(784), 1, AxisType::GLOBAL);
  UOp c3 = UOp::range(c(10), 3, AxisType::GLOBAL);
  UOp c4 = UOp::param(1, dtypes::int32, Shape{512});
  UOp c5 = c4.index(c1.valid(UOp::const_(PyConst(true))));
  UOp c6 = UOp::range(c(6000), 1004, AxisType::REDUCE), c7 = UOp::range(c(3750), 2006, AxisType::REDUCE);
  UOp c8 = UOp::range(c(16), 2007, AxisType::GROUP_REDUCE);
  UOp c9 = UOp::param(2, dtypes::uint8, Shape{47040000});
  UOp c10 = c9.index((((c3 * c(4704000)) + c2) + (c6 * c(784))).valid(UOp::const_(PyConst(true))));
  UOp inner = ((((c3 * c(6000)) + c6) + ((c7 * c(16)) + c8)).alu(Ops::CMPLT, c(59999)))
                  .where(c(0).cast(dtypes::int32), c(1).cast(dtypes::int32))
                  .reduce(std::vector<UOp>{c7, c8}, Ops::ADD);
  UOp c11 = c5.alu(Ops::CMPNE, inner + c(-1).cast(dtypes::int32))
                .where(c(0).cast(dtypes::uint8), c10)
                .reduce(std::vector<UOp>{c6}, Ops::ADD);
  UOp c12 = c0.index((((c1 * c(7840)) + (c2 * c(10))) + c3).valid(UOp::const_(PyConst(true))))
                .store(c11)
                .end(std::vector<UOp>{c1, c2, c3});
  KernelInfo ki;
  ki.applied_opts = Arg::tup(Opt(OptOps::GROUP, 1, Arg(16)).to_arg());
  UOp ast = UOp::sink({c12}, ki.to_arg());
  UOp sink;
  ASSERT_NO_THROW(sink = full_rewrite_to_sink(ast, local_ren()));
  EXPECT_FALSE(do_linearize(sink).empty());
}

// ************************* the Scheduler's checks *************************
namespace {
// out[i] = sum_j a[i, j] over a (rows x cols) float buffer: a WEAK output range and a REDUCE range
UOp reduce_ast(pyint rows, pyint cols, const std::vector<Opt>& opts) {
  UOp i = UOp::range(sint(rows), 0), j = UOp::range(sint(cols), 1, AxisType::REDUCE);
  UOp a = UOp::param(1, dtypes::float32, Shape{rows * cols});
  UOp r = a.index(i * UOp::const_(PyConst(cols)) + j).reduce(std::vector<UOp>{j}, Ops::ADD);
  UOp st = UOp::param(0, dtypes::float32, Shape{rows}).index(i).store(r).end(std::vector<UOp>{i});
  KernelInfo ki;
  std::vector<Arg> oa;
  for (const Opt& o : opts) oa.push_back(o.to_arg());
  ki.opts_to_apply = Arg::tuple(oa);
  return UOp::sink({st}, ki.to_arg());
}
std::string opt_error(const Renderer& ren, const std::vector<Opt>& opts, pyint rows = 64, pyint cols = 64) {
  try {
    full_rewrite_to_sink(reduce_ast(rows, cols, opts), ren);
  } catch (const KernelOptError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Scheduler, OptChecks) {
  EXPECT_EQ(opt_error(clang_ren(), {Opt(OptOps::UPCAST, 0, Arg(4)), Opt(OptOps::UNROLL, 0, Arg(4))}), "");
  EXPECT_EQ(opt_error(clang_ren(), {Opt(OptOps::UPCAST, 0, Arg(32))}), "don't upcast more than 16");
  EXPECT_EQ(opt_error(clang_ren(), {Opt(OptOps::UNROLL, 0, Arg(64))}), "don't unroll more than 32");
  EXPECT_EQ(opt_error(clang_ren(), {Opt(OptOps::LOCAL, 0, Arg(4))}), "locals needed for opt");
  EXPECT_EQ(opt_error(clang_ren(), {Opt(OptOps::GROUPTOP, 0, Arg(16))}), "locals needed for opt");
  EXPECT_EQ(opt_error(local_ren(), {Opt(OptOps::THREAD, 0, Arg(2))}), "target does not support threads");
  EXPECT_EQ(opt_error(clang_ren(), {Opt(OptOps::THREAD, 0, Arg(16))}), "too many threads");
  EXPECT_EQ(opt_error(clang_ren(), {Opt(OptOps::THREAD, 0, Arg(2)), Opt(OptOps::THREAD, 0, Arg(2))}),
            "already threaded");
  EXPECT_EQ(opt_error(clang_ren(), {Opt(OptOps::UPCAST, 0, Arg(3))}).rfind("3 can't divide ", 0), 0u);
  EXPECT_EQ(opt_error(clang_ren(), {Opt(OptOps::PADTO, 0, Arg(64))}, 5, 8), "pad adds more than quadruple the work");
  EXPECT_EQ(opt_error(clang_ren(), {Opt(OptOps::UPCAST, 5, Arg(2))}),
            "invalid axis on axis=5 op=UPCAST self.shape_len=2");
  EXPECT_EQ(opt_error(local_ren(), {Opt(OptOps::UPCAST, 1, Arg(4))}),
            "upcast is for GLOBAL/LOCAL/LOOP, not AxisType.REDUCE");
  EXPECT_EQ(opt_error(local_ren(), {Opt(OptOps::NOLOCALS), Opt(OptOps::LOCAL, 0, Arg(4))}), "can't use locals");
  EXPECT_EQ(opt_error(local_ren(), {Opt(OptOps::LOCAL, 0, Arg(4)), Opt(OptOps::NOLOCALS)}),
            "no locals can't have locals");
  EXPECT_EQ(opt_error(local_ren(), {Opt(OptOps::SWAP, 0, Arg(1))}), "swap only for globals");
}

// hand_coded_optimizations is pure: it works on a copy, and the Scheduler it was given keeps its AST and opts
TEST(Scheduler, HandCodedOnACopy) {
  UOp ast = reduce_ast(512, 512, {});
  ast = ast.replace({}, {}, {}, KernelInfo().to_arg());
  Scheduler k(ast, clang_ren());
  UOp before = k.ast;
  Scheduler opt = hand_coded_optimizations(k);
  EXPECT_EQ(k.ast, before);
  EXPECT_TRUE(k.applied_opts.empty());
  EXPECT_FALSE(opt.applied_opts.empty());
}

// devectorize2 makes each lane's INDEX(movement op, constants) go through the movement ops at once (codegen.cpp
// lane_through_movement), which is its fixed point under devectorize2's rules only if the first of them to match such
// an INDEX is pm_mops' mop_index. Checked here on random chains of RESHAPE, EXPAND and PERMUTE over a buffer, with
// every rule of the matcher in order (the INDEX bucket); the codegen cases above check the end result against the
// reference's.
TEST(Devectorize, AnIndexOfAMovementOpIsFirstMatchedByMopIndex) {
  static const PatternMatcher devec = symbolic_simple() + devectorizer2() + indexing_simplify();
  const Renderer* ren = &clang_ren();
  std::mt19937 rng(5);
  int checked = 0;
  for (int trial = 0; trial < 400; trial++) {
    UOp x = test_util::random_buffer(rng);
    for (int step = 0, ns = 1 + (int)(rng() % 3); step < ns; step++)
      x = test_util::random_movement(rng, x, (int)(rng() % 3));
    if (!GroupOp::Movement.has(x.op())) continue;
    std::vector<UOp> idx;
    for (const sint& d : x.shape()) idx.push_back(UOp::const_(PyConst((pyint)(rng() % d.i()))));
    UOp lane = x.index(idx);
    UOp expected = mop_index(x, lane);
    if (!expected) continue;
    EXPECT_EQ(devec.rewrite(lane, ren), expected) << "trial " << trial << ": " << lane.repr();
    checked++;
  }
  EXPECT_GT(checked, 300);
}

// A rule's precondition (TG_RULE(...).when(pre)) is its function's own first test: where pre is false the rule gives
// None (and throws nothing), so skipping it there changes nothing. Checked for every registered rule that has one,
// on index arithmetic over weakint, int64 and int32 values, casts, floats and vectors
TEST(RulePreconditions, ARuleGivesNoneWherePreIsFalse) {
  (void)sym(), (void)devectorizer2(), (void)ew_devectorizer(), (void)pm_lower_index_dtype();  // rules registered
  std::vector<UOp> nodes = {UOp::variable("pa", 0, 100),
                            UOp::variable("pb", -5, 5),
                            UOp::variable("pc", 0, 10, dtypes::int64),
                            UOp::const_(PyConst(3), dtypes::int32),
                            UOp::const_(PyConst(7)),
                            UOp::const_(PyConst(1.5), dtypes::float32)};
  nodes.push_back(UOp::stack({nodes[5], nodes[5], nodes[5], nodes[5]}));
  // each new node: one of these on two random earlier nodes (mismatched dtypes or shapes throw: no node)
  using Build = UOp (*)(const UOp&, const UOp&);
  const Build builds[] = {
      [](const UOp& a, const UOp& b) { return a + b; },
      [](const UOp& a, const UOp& b) { return a * b; },
      [](const UOp& a, const UOp& b) { return a.cast(b.dtype() == dtypes::int64 ? dtypes::int32 : dtypes::int64); },
      [](const UOp& a, const UOp& b) { return (a < b).where(a, b); },
      [](const UOp& a, const UOp& b) { return a.alu(Ops::MAX, b); },
      [](const UOp& a, const UOp&) { return a % PyConst(3) + (a / PyConst(3)) * PyConst(3); },  // (x%c)+(x//c)*c
      [](const UOp& a, const UOp& b) { return a.cast(dtypes::weakint) + b; },
  };
  std::mt19937 rng(5);
  for (int i = 0; i < 400; i++) {
    const UOp &a = nodes[rng() % nodes.size()], &b = nodes[rng() % nodes.size()];
    try {
      nodes.push_back(builds[rng() % std::size(builds)](a, b));
    } catch (const Error&) {
    }
  }
  int checked = 0, skipped = 0;
  LowerIndexCtx lctx;
  for (uint32_t id = 0; id < rule_count(); id++) {
    const RuleData* r = rule_by_id(id);
    if (!r || !r->pre) continue;
    checked++;
    for (const UOp& u : nodes) {
      if (std::find(r->ops.begin(), r->ops.end(), u.op()) == r->ops.end() || r->pre(u)) continue;
      skipped++;
      UOp out;
      bool matched = true;
      EXPECT_NO_THROW(matched = detail::try_rule(*r, u, CtxRef(&lctx), &out, true)) << r->file << ":" << r->src.line;
      EXPECT_FALSE(matched) << r->file << ":" << r->src.line << " on " << op_repr(u.op());
    }
  }
  EXPECT_GE(checked, 5);
  EXPECT_GT(skipped, 500);
}
