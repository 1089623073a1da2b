// Transcribed from the reference's test/backend/test_uops.py and test/null/test_uops.py: hand-built UOp programs,
// executed. The codegen passes are not ported yet, so each program is the reference's lowering of the test's UOps
// (tests/data/uops_kernel_goldens.txt, gen_uops_kernel_goldens.py); the interpreter runs it and the test's own
// assertion (the python lambda of each test, transcribed below) must hold, and the result must equal what the
// reference's compiled CPU kernel produced.
// Also hand-built programs written directly in C++ (linearized by our linearizer, rendered, interpreted).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <random>

#include "backends/interp/interp.h"
#include "lib/codegen/late/linearizer.h"
#include "lib/codegen/late/program.h"
#include "lib/codegen/late/pysort.h"
#include "lib/renderer/cstyle.h"
#include "lib/renderer/llvmir.h"
#include "lib/uop/kernel_info.h"
#include "lib/uop/serialize.h"
#include "tests/support/golden_file.h"
#include "tests/support/uops_goldens.h"

using namespace tg;

namespace {

using tg::test::dec_linear;

const UopsGoldens& goldens() {
  static const UopsGoldens g = load_uops_goldens(TG_TEST_DATA "/uops_kernel_goldens.txt");
  return g;
}
const std::vector<UopsCase>& cases() { return goldens().cases; }
std::vector<const UopsCase*> cases_of(const std::string& test) {
  std::vector<const UopsCase*> r;
  for (const auto& c : cases())
    if (c.test == test) r.push_back(&c);
  return r;
}


// run a case's program on its inputs; the buffers after the run
std::vector<std::vector<uint8_t>> run_case(const UopsCase& c) {
  std::vector<std::vector<uint8_t>> mem;
  std::vector<interp::BufferView> views;
  for (const auto& b : c.bufs) mem.push_back(b.before);
  for (size_t i = 0; i < mem.size(); i++)
    views.push_back({mem[i].data(), c.bufs[i].count, dtypes::by_name(c.bufs[i].dtype)});
  std::vector<std::optional<pyint>> vals;
  for (const auto& v : c.vals) vals.push_back(v == "-" ? std::nullopt : std::optional<pyint>(std::stoll(v)));
  interp::LaunchDims dims;
  dims.global = c.global;
  interp::Program(dec_linear(c.program)).run(views, vals, dims);
  return mem;
}

PyConst scalar(const std::vector<uint8_t>& mem, const std::string& dt, size_t i = 0) {
  DType d = dtypes::by_name(dt);
  return interp::load_scalar(mem.data() + i * (size_t)d.itemsize(), d);
}

// TestUOps._equal: floats with assert_allclose(rtol=2e-7) (nan equals nan), everything else exactly
void expect_equal(const PyConst& got, const PyConst& want) {
  if (want.is_float()) {
    double a = got.as_float(), b = want.as_float();
    if (std::isnan(b))
      EXPECT_TRUE(std::isnan(a)) << "want nan, got " << got.str();
    else if (std::isinf(b))
      EXPECT_EQ(a, b);
    else
      EXPECT_LE(std::fabs(a - b), 2e-7 * std::fabs(b)) << "want " << want.str() << ", got " << got.str();
  } else {
    EXPECT_EQ(got.as_int(), want.as_int()) << "want " << want.str() << ", got " << got.str();
  }
}

using Fxn = std::function<PyConst(const std::vector<PyConst>&)>;
// every execution of a test: the interpreter's result is the reference's, and the test's lambda holds
void check_test(const std::string& test, size_t expect_cases, const Fxn& fxn) {
  auto cs = cases_of(test);
  ASSERT_EQ(cs.size(), expect_cases) << test;
  for (const UopsCase* c : cs) {
    std::string ops;
    for (const auto& o : c->operands) ops += o.str() + " ";
    SCOPED_TRACE(test + " #" + std::to_string(c->k) + " operands " + ops);
    auto mem = run_case(*c);
    const std::string& odt = c->bufs[0].dtype;
    PyConst got = scalar(mem[0], odt), ref = scalar(c->bufs[0].after, odt);
    // the reference's compiled kernel
    if (got.is_float() && std::isnan(got.as_float()))
      EXPECT_TRUE(std::isnan(ref.as_float()));
    else
      EXPECT_TRUE(got == ref) << "reference computed " << ref.str() << ", interpreter " << got.str();
    // the test's assertion, on the operands it passed
    expect_equal(got, fxn(c->operands));
  }
}

PyConst F(double x) { return PyConst(x); }
PyConst I(pyint x) { return PyConst(x); }
PyConst Bo(bool x) { return PyConst(x); }
double f(const PyConst& c) { return c.as_float(); }
pyint i(const PyConst& c) { return c.as_int(); }
bool b(const PyConst& c) { return c.truthy(); }

}  // namespace

// ***** test/backend/test_uops.py: TestFloatUOps *****
TEST(TestFloatUOps, Recip) {
  check_test("TestFloatUOps.test_recip", 6, [](auto& v) { return F(f(v[0]) != 0 ? 1 / f(v[0]) : INFINITY); });
}
TEST(TestFloatUOps, Sqrt) {
  check_test("TestFloatUOps.test_sqrt", 6, [](auto& v) { return F(f(v[0]) >= 0 ? std::sqrt(f(v[0])) : NAN); });
}
TEST(TestFloatUOps, Add) {
  check_test("TestFloatUOps.test_add", 18, [](auto& v) { return F(f(v[0]) + f(v[1])); });
}
TEST(TestFloatUOps, Mul) {
  check_test("TestFloatUOps.test_mul", 18, [](auto& v) { return F(f(v[0]) * f(v[1])); });
}
TEST(TestFloatUOps, Max) {
  check_test("TestFloatUOps.test_max", 18, [](auto& v) { return F(std::max(f(v[0]), f(v[1]))); });
}
TEST(TestFloatUOps, Cmplt) {
  check_test("TestFloatUOps.test_cmplt", 18, [](auto& v) { return Bo(f(v[0]) < f(v[1])); });
}
TEST(TestFloatUOps, Cmpne) {
  check_test("TestFloatUOps.test_cmpne", 18, [](auto& v) { return Bo(f(v[0]) != f(v[1])); });
}
TEST(TestFloatUOps, CmpneNan) {  // NaN != x for any x (IEEE 754)
  check_test("TestFloatUOps.test_cmpne_nan", 3, [](auto&) { return Bo(true); });
}
TEST(TestFloatUOps, Where) {
  check_test("TestFloatUOps.test_where", 24, [](auto& v) { return b(v[0]) ? F(f(v[1])) : F(f(v[2])); });
}

// ***** TestNonFloatUOps *****
TEST(TestNonFloatUOps, AddInt32) {
  check_test("TestNonFloatUOps.test_add_int32", 18, [](auto& v) { return I(i(v[0]) + i(v[1])); });
}
TEST(TestNonFloatUOps, MulInt32) {
  check_test("TestNonFloatUOps.test_mul_int32", 18, [](auto& v) { return I(i(v[0]) * i(v[1])); });
}
TEST(TestNonFloatUOps, ShrInt32) {
  check_test("TestNonFloatUOps.test_shr_int32", 18, [](auto& v) { return I(i(v[0]) >> i(v[1])); });
}
TEST(TestNonFloatUOps, ShlInt32) {
  check_test("TestNonFloatUOps.test_shl_int32", 18, [](auto& v) { return I(i(v[0]) << i(v[1])); });
}
TEST(TestNonFloatUOps, DivInt32) {  // int(a/b): truncation toward zero
  check_test("TestNonFloatUOps.test_div_int32", 12,
             [](auto& v) { return I((pyint)std::trunc((double)i(v[0]) / (double)i(v[1]))); });
}
TEST(TestNonFloatUOps, AndInt32) {
  check_test("TestNonFloatUOps.test_and_int32", 18, [](auto& v) { return I(i(v[0]) & i(v[1])); });
}
TEST(TestNonFloatUOps, OrInt32) {
  check_test("TestNonFloatUOps.test_or_int32", 18, [](auto& v) { return I(i(v[0]) | i(v[1])); });
}
TEST(TestNonFloatUOps, ModInt32) {  // abs(a)%abs(b)*(1,-1)[a<0]
  check_test("TestNonFloatUOps.test_mod_int32", 12, [](auto& v) {
    pyint a = i(v[0]), bb = i(v[1]);
    return I((a < 0 ? -a : a) % (bb < 0 ? -bb : bb) * (a < 0 ? -1 : 1));
  });
}
TEST(TestNonFloatUOps, CmpltInt32) {
  check_test("TestNonFloatUOps.test_cmplt_int32", 18, [](auto& v) { return Bo(i(v[0]) < i(v[1])); });
}
TEST(TestNonFloatUOps, CmpneInt32) {
  check_test("TestNonFloatUOps.test_cmpne_int32", 18, [](auto& v) { return Bo(i(v[0]) != i(v[1])); });
}
TEST(TestNonFloatUOps, MulBool) {
  check_test("TestNonFloatUOps.test_mul_bool", 18, [](auto& v) { return Bo(b(v[0]) && b(v[1])); });
}
TEST(TestNonFloatUOps, WhereFloat16) {
  check_test("TestNonFloatUOps.test_where_float16", 24, [](auto& v) { return b(v[0]) ? F(f(v[1])) : F(f(v[2])); });
}

// ***** TestBoolUOps *****
TEST(TestBoolUOps, AddBool) {
  check_test("TestBoolUOps.test_add_bool", 8, [](auto& v) { return Bo(b(v[0]) || b(v[1])); });
}
TEST(TestBoolUOps, MulBool) {
  check_test("TestBoolUOps.test_mul_bool", 8, [](auto& v) { return Bo(b(v[0]) && b(v[1])); });
}
TEST(TestBoolUOps, XorBool) {
  check_test("TestBoolUOps.test_xor_bool", 8, [](auto& v) { return Bo(b(v[0]) != b(v[1])); });
}
TEST(TestBoolUOps, AndBool) {
  check_test("TestBoolUOps.test_and_bool", 8, [](auto& v) { return Bo(b(v[0]) && b(v[1])); });
}
TEST(TestBoolUOps, OrBool) {
  check_test("TestBoolUOps.test_or_bool", 8, [](auto& v) { return Bo(b(v[0]) || b(v[1])); });
}
TEST(TestBoolUOps, CmpneBool) {
  check_test("TestBoolUOps.test_cmpne_bool", 8, [](auto& v) { return Bo(b(v[0]) != b(v[1])); });
}
TEST(TestBoolUOps, CmpltBool) {
  check_test("TestBoolUOps.test_cmplt_bool", 8, [](auto& v) { return Bo(!b(v[0]) && b(v[1])); });
}
TEST(TestBoolUOps, WhereBool) {
  check_test("TestBoolUOps.test_where_bool", 16, [](auto& v) { return Bo(b(v[0]) ? b(v[1]) : b(v[2])); });
}

// ***** TestLocalAccess *****
TEST(TestLocalAccess, LocalBasic) {
  auto cs = cases_of("TestLocalAccess.test_local_basic");
  ASSERT_EQ(cs.size(), 1u);
  auto mem = run_case(*cs[0]);
  EXPECT_EQ(scalar(mem[0], cs[0]->bufs[0].dtype).as_float(), 42.0);
}

// ***** TestBitcastBufferView *****
TEST(TestBitcastBufferView, Load) {
  auto cs = cases_of("TestBitcastBufferView.test_load");
  ASSERT_EQ(cs.size(), 1u);
  auto mem = run_case(*cs[0]);
  // slot 1 is the uint64 output
  size_t out = cs[0]->bufs[0].dtype == "uint64" ? 0 : 1;
  EXPECT_EQ((uint64_t)scalar(mem[out], "uint64").as_int(), 0x1122334455667788ull);
}
TEST(TestBitcastBufferView, Store) {
  auto cs = cases_of("TestBitcastBufferView.test_store");
  ASSERT_EQ(cs.size(), 1u);
  auto mem = run_case(*cs[0]);
  uint64_t v[2];
  std::memcpy(v, mem[0].data() + 4, 16);  // np.frombuffer(..., dtype=np.uint64, count=2, offset=4)
  EXPECT_EQ(v[0], 0x1122334455667788ull ^ 0xff);
  EXPECT_EQ(v[1], 0x1122334455667788ull);
}
TEST(TestBitcastBufferView, Render) {
  auto cs = cases_of("TestBitcastBufferView.test_render");
  ASSERT_EQ(cs.size(), 1u);
  auto uops = do_linearize(decode_graph(cs[0]->sink));
  ASSERT_EQ(encode_graph(UOp(Ops::LINEAR, dtypes::void_, uops)), cs[0]->program);
  const UOp* idx = nullptr;
  for (const UOp& u : uops)
    if (u.op() == Ops::INDEX && u.src(0).op() == Ops::BITCAST) {
      idx = &u;
      break;
    }
  ASSERT_NE(idx, nullptr);
  EXPECT_EQ(idx->src(0).src(0).op(), Ops::SHRINK);
  std::string src = ClangRenderer(Target{"CPU", "CLANG", "x86_64,native", "", ""}).render(uops);
  std::string want;
  for (size_t k = 0; k < cs[0]->source.size(); k++) want += (k ? "\n" : "") + cs[0]->source[k];
  EXPECT_EQ(src, want);
}

// ***** TestZeroRange *****
TEST(TestZeroRange, ReduceVariable) {
  auto cs = cases_of("TestZeroRange.test_reduce_variable");
  ASSERT_EQ(cs.size(), 8u);  // per i in 3..0: the contiguous ones, then the sum
  for (size_t k = 0; k < cs.size(); k += 2) {
    pyint want = cs[k + 1]->operands[0].as_int();
    SCOPED_TRACE("i=" + pyint_str(want));
    run_case(*cs[k]);
    auto mem = run_case(*cs[k + 1]);
    EXPECT_EQ(scalar(mem[0], cs[k + 1]->bufs[0].dtype).as_int(), want);  // out.item() == i
  }
}

// ***** TestUOpPrograms *****
TEST(TestUOpPrograms, Simple) {
  auto cs = cases_of("TestUOpPrograms.test_simple");
  ASSERT_EQ(cs.size(), 1u);
  auto mem = run_case(*cs[0]);
  for (size_t k = 0; k < 100; k++) EXPECT_EQ(scalar(mem[0], "int32", k).as_int(), 42);  // (out == 42).all()
}
static void check_matmul(const char* test, bool relu) {
  auto cs = cases_of(test);
  ASSERT_EQ(cs.size(), 1u);
  auto mem = run_case(*cs[0]);
  // slots: 0 = a, 1 = b, 2 = c; ((c-ref)**2).mean() <= 1e-6 with ref = a@b (relu'd)
  double se = 0;
  for (int r = 0; r < 10; r++)
    for (int col = 0; col < 10; col++) {
      double ref = 0;
      for (int k = 0; k < 10; k++)
        ref += scalar(mem[0], "float32", r * 10 + k).as_float() * scalar(mem[1], "float32", k * 10 + col).as_float();
      if (relu) ref = std::max(ref, 0.0);
      double d = scalar(mem[2], "float32", r * 10 + col).as_float() - ref;
      se += d * d;
    }
  EXPECT_LE(se / 100, 1e-6);
  // and close to what the reference's compiled kernel computed (which may fuse the multiply-add)
  for (size_t k = 0; k < 100; k++) {
    double got = scalar(mem[2], "float32", k).as_float(), ref = scalar(cs[0]->bufs[2].after, "float32", k).as_float();
    EXPECT_LE(std::fabs(got - ref), 1e-6 + 1e-6 * std::fabs(ref)) << "element " << k;
  }
}
TEST(TestUOpPrograms, Matmul) { check_matmul("TestUOpPrograms.test_matmul", false); }
TEST(TestUOpPrograms, MatmulRelu) { check_matmul("TestUOpPrograms.test_matmul_relu", true); }

// ***** test/null/test_uops.py: TestGatedStoreRewrite *****
static void check_gated_store(const char* test) {
  auto cs = cases_of(test);
  ASSERT_EQ(cs.size(), 1u);
  auto uops = do_linearize(decode_graph(cs[0]->sink));
  EXPECT_EQ(encode_graph(UOp(Ops::LINEAR, dtypes::void_, uops)), cs[0]->program);
  size_t if_pos = uops.size(), endif_pos = uops.size();
  for (size_t k = 0; k < uops.size(); k++) {
    if (uops[k].op() == Ops::IF && if_pos == uops.size()) if_pos = k;
    if (uops[k].op() == Ops::ENDIF && endif_pos == uops.size()) endif_pos = k;
  }
  ASSERT_LT(if_pos, uops.size());
  ASSERT_LT(endif_pos, uops.size());
  EXPECT_TRUE(uops[endif_pos].src(0) == uops[if_pos]);
  ASSERT_EQ(endif_pos - if_pos - 1, 1u);  // one gated uop
  EXPECT_EQ(uops[if_pos + 1].op(), Ops::STORE);
  EXPECT_EQ(uops[if_pos + 1].nsrc(), 2u);
}
TEST(TestGatedStoreRewrite, TinyGateStore) { check_gated_store("TestGatedStoreRewrite.test_tiny_gate_store"); }
TEST(TestGatedStoreRewrite, GateSomeStores) { check_gated_store("TestGatedStoreRewrite.test_gate_some_stores"); }

// ***** hand-built programs (the CPU device's own helper programs and corners of the late stage) *****
// linearized by us, rendered by both renderers (or refused where the reference's renderer refused), and run by the
// interpreter on the inputs the reference's PYTHON device ran them on, bit for bit
TEST(LateHandBuilt, LinearizeRenderRun) {
  int n = 0, runs = 0;
  ClangRenderer clang(Target{"CPU", "CLANG", "x86_64,native", "", ""});
  CPULLVMRenderer llvm(Target{"CPU", "LLVM", "x86_64,native", "", ""});
  auto join = [](const std::vector<std::string>& v) {
    std::string r;
    for (size_t k = 0; k < v.size(); k++) r += (k ? "\n" : "") + v[k];
    return r;
  };
  for (const auto& c : cases()) {
    if (c.test.rfind("CPUDevice.", 0) != 0 && c.test.rfind("Late.", 0) != 0) continue;
    SCOPED_TRACE(c.test);
    n++;
    auto uops = do_linearize(decode_graph(c.sink));
    EXPECT_EQ(encode_graph(UOp(Ops::LINEAR, dtypes::void_, uops)), c.program);
    if (c.has_source)
      EXPECT_EQ(clang.render(uops), join(c.source));
    else
      EXPECT_THROW(clang.render(uops), Error);
    if (c.has_llvm_source)
      EXPECT_EQ(llvm.render(uops), join(c.llvm_source));
    else
      EXPECT_THROW(llvm.render(uops), Error);
    for (const UopsRun& r : c.runs) {
      runs++;
      std::vector<std::vector<uint8_t>> mem;
      std::vector<interp::BufferView> views;
      for (const auto& b : r.bufs) mem.push_back(b.before);
      for (size_t k = 0; k < mem.size(); k++)
        views.push_back({mem[k].data(), r.bufs[k].count, dtypes::by_name(r.bufs[k].dtype)});
      std::vector<std::optional<pyint>> vals;
      for (const auto& v : r.vals) vals.push_back(std::optional<pyint>(std::stoll(v)));
      interp::LaunchDims dims{r.global, r.local};
      interp::Program(uops).run(views, vals, dims);
      for (size_t k = 0; k < mem.size(); k++) EXPECT_EQ(mem[k], r.bufs[k].after) << "buffer " << k;
    }
  }
  EXPECT_EQ(n, 9);
  EXPECT_EQ(runs, 7);
}

// ***** python's list.sort (lib/codegen/late/pysort.h): the same permutation as CPython 3.11's sorted() *****
TEST(PySort, MatchesCPython) {
  int n_cases = 0;
  for (const PySortCase& c : goldens().pysorts) {
    std::vector<double> vals;
    for (const std::string& v : c.values) vals.push_back(v == "nan" ? NAN : std::stod(v));
    std::vector<size_t> got(vals.size());
    for (size_t k = 0; k < got.size(); k++) got[k] = k;
    detail::py_sort_indices(got, [&](size_t a, size_t b) { return vals[a] < vals[b]; });
    EXPECT_EQ(got, c.perm) << c.kind << " n=" << vals.size();
    n_cases++;
  }
  EXPECT_EQ(n_cases, 34);
}

// ***** a kernel written directly in C++ in its post-codegen form (what full_rewrite_to_sink returns for
// a.index(r).store(b.index(r) * 2.0).end(r) on the CPU): linearized, rendered like the reference renders it, run *****
TEST(LateApi, HandWrittenKernel) {
  auto param = [](int64_t slot, const UOp& size) {
    ParamArg p;
    p.slot = slot;
    p.dtype = dtypes::float32;
    return UOp(Ops::PARAM, dtypes::float32, {size}, p.to_arg());
  };
  UOp n = UOp::const_(PyConst(16), dtypes::weakint).cast(dtypes::int32);
  UOp a = param(0, n), b = param(1, n);
  UOp r(Ops::RANGE, dtypes::int32, {n}, Arg::tup(0, AxisType::WEAK));
  UOp val(Ops::LOAD, dtypes::float32, {UOp(Ops::INDEX, dtypes::float32, {b, r})});
  UOp two = UOp::const_(PyConst(2.0), dtypes::weakfloat).cast(dtypes::float32);
  UOp st(Ops::STORE, dtypes::void_,
         {UOp(Ops::INDEX, dtypes::float32, {a, r}), UOp(Ops::MUL, dtypes::float32, {val, two})});
  UOp sink = UOp::sink({UOp(Ops::END, dtypes::void_, {st, r})}, KernelInfo("double").to_arg());

  std::vector<UOp> prg = do_linearize(sink);
  ASSERT_EQ(prg.back(), sink);
  EXPECT_EQ(ClangRenderer(Target{"CPU", "CLANG", "x86_64,native", "", ""}).render(prg),
            "\nvoid double(float* restrict data0_16, float* restrict data1_16) {\n"
            "  for (int Lidx0 = 0; Lidx0 < 16; Lidx0++) {\n"
            "    float val0 = (*(data1_16+Lidx0));\n"
            "    *(data0_16+Lidx0) = (val0*2.0f);\n"
            "  }\n"
            "}\n");

  std::vector<float> out(16, 0), in(16);
  for (int k = 0; k < 16; k++) in[(size_t)k] = (float)k - 3.5f;
  interp::Program(prg).run({interp::view(out, dtypes::float32), interp::view(in, dtypes::float32)});
  for (int k = 0; k < 16; k++) EXPECT_EQ(out[(size_t)k], 2 * in[(size_t)k]);

  // the same through a PROGRAM (ProgramInfo: two globals, slot 0 written, slot 1 read)
  UOp program = to_program_from_full_sink(sink, ClangRenderer(Target{}));
  const ProgramInfo* info = program.arg().as<ProgramInfo>();
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->globals, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(info->outs, (std::vector<int64_t>{0}));
  EXPECT_EQ(info->ins, (std::vector<int64_t>{1}));
  std::fill(out.begin(), out.end(), 0.f);
  std::vector<interp::BufferView> bufs{interp::view(out, dtypes::float32), interp::view(in, dtypes::float32)};
  interp::run_program(program, bufs);
  EXPECT_EQ(out[5], 2 * in[5]);
  Estimates e = Estimates::from_uops(prg, true);
  EXPECT_EQ(e.ops.i(), 16);  // one MUL per iteration
  EXPECT_EQ(e.lds.i(), 128);
  EXPECT_EQ(e.mem.i(), 128);
}

// ***** the linearizer's tie-break: TuplizeOrder against the definition *****

namespace {
// python == and < on UOp.tuplize = (op.value, arg, dtype, *src.tuplize), the tag left out, by walking both graphs
bool py_arg_lt(const Arg& a, const Arg& b) {
  if ((a.is_float() && std::isnan(a.as_float())) || (b.is_float() && std::isnan(b.as_float()))) return false;
  return a.py_cmp(b) < 0;
}
bool tuplize_eq_walk(const UOp& a, const UOp& b) {
  if (a == b) return true;
  if (a.op() != b.op() || a.dtype() != b.dtype() || a.nsrc() != b.nsrc() || !a.arg().py_eq(b.arg())) return false;
  for (size_t i = 0; i < a.nsrc(); i++)
    if (!tuplize_eq_walk(a.src(i), b.src(i))) return false;
  return true;
}
bool tuplize_lt_walk(const UOp& a, const UOp& b) {
  if (a == b) return false;
  if (a.op() != b.op()) return (int)a.op() < (int)b.op();
  if (!a.arg().py_eq(b.arg())) return py_arg_lt(a.arg(), b.arg());
  if (a.dtype() != b.dtype()) return a.dtype() < b.dtype();
  for (size_t i = 0; i < std::min(a.nsrc(), b.nsrc()); i++)
    if (!tuplize_eq_walk(a.src(i), b.src(i))) return tuplize_lt_walk(a.src(i), b.src(i));
  return a.nsrc() < b.nsrc();
}
}  // namespace

// random graphs full of nodes that are different UOps with equal tuplizes (1, 1.0 and True as args, tuples of them,
// tags), NaN args (never equal, never smaller) and shared subgraphs: every pair compares as by the definition
TEST(TuplizeOrder, EveryPairComparesLikePythonTuplizeOnRandomGraphs) {
  std::mt19937 rng(1234);
  const std::vector<Arg> args{Arg(1),
                              Arg(1.0),
                              Arg(true),
                              Arg(2),
                              Arg(2.5),
                              Arg(0),
                              Arg(-0.0),
                              Arg(false),
                              Arg(std::nan("")),
                              Arg::tuple({Arg(1), Arg(2.0)}),
                              Arg::tuple({Arg(1.0), Arg(2)}),
                              Arg::tuple({Arg(true), Arg(2)}),
                              Arg::tuple({Arg(1), Arg(3)})};
  const DType dts[] = {dtypes::float32, dtypes::int32};
  const Ops ops[] = {Ops::ADD, Ops::MUL, Ops::MAX, Ops::CUSTOM};
  size_t equal_pairs = 0, distinct_equal_pairs = 0;
  for (int round = 0; round < 25; round++) {
    std::vector<UOp> pool;
    for (int i = 0; i < 10; i++) pool.push_back(UOp(Ops::CONST, dts[rng() % 2], {}, args[rng() % args.size()]));
    for (int i = 0; i < 50; i++) {
      Ops op = ops[rng() % 4];
      size_t ns = op == Ops::CUSTOM ? rng() % 4 : 2;
      std::vector<UOp> src;
      for (size_t k = 0; k < ns; k++) src.push_back(pool[pool.size() - 1 - rng() % std::min<size_t>(pool.size(), 12)]);
      Arg arg = op == Ops::CUSTOM ? args[rng() % args.size()] : Arg();
      Arg tag = rng() % 3 == 0 ? Arg((int)(rng() % 2)) : Arg();
      pool.push_back(UOp(op, dts[rng() % 2], src, arg, tag));
    }
    std::vector<UOp> lst = UOp(Ops::SINK, dtypes::void_, pool).toposort();
    TuplizeOrder order(lst);
    for (size_t a = 0; a < lst.size(); a++)
      for (size_t b = 0; b < lst.size(); b++) {
        bool eq = tuplize_eq_walk(lst[a], lst[b]);
        ASSERT_EQ(order.eq(a, b), eq) << "round " << round << ": " << a << " vs " << b;
        ASSERT_EQ(order.lt(a, b), tuplize_lt_walk(lst[a], lst[b])) << "round " << round << ": " << a << " vs " << b;
        equal_pairs += eq;
        distinct_equal_pairs += eq && a != b;
      }
  }
  // the graphs did exercise equal tuplizes of different nodes (not only identity)
  EXPECT_GT(distinct_equal_pairs, 50u);
  EXPECT_GT(equal_pairs, distinct_equal_pairs);
}

TEST(TuplizeOrder, ListThatIsNotAToposortIsAnError) {
  UOp a = UOp(Ops::CONST, dtypes::int32, {}, Arg(1));
  UOp b = UOp(Ops::ADD, dtypes::int32, {a, a});
  std::vector<UOp> wrong{b, a};
  EXPECT_THROW(TuplizeOrder{wrong}, Error);
}

// ***** CFGContext: sibling loops are chained in the SINK's order, a nested loop comes after its parent's RANGE; the
// same edges with at most 64 RANGEs and ENDs (the deps kept as masks) and with more (kept as lists) *****
TEST(CFGContext, SiblingLoopsChainAndNestedLoopsFollowTheirParentWithAndWithoutMasks) {
  for (int n : {10, 20}) {  // 4 RANGEs and ENDs per loop pair: 40 and 80
    ParamArg p;
    p.slot = 0;
    p.dtype = dtypes::float32;
    UOp size = UOp::const_(PyConst(64), dtypes::int32);
    UOp buf(Ops::PARAM, dtypes::float32, {size}, p.to_arg());
    std::vector<UOp> outer_ends, outer, inner;
    for (int i = 0; i < n; i++) {
      UOp ro(Ops::RANGE, dtypes::int32, {UOp::const_(PyConst(4), dtypes::int32)}, Arg::tup(2 * i, AxisType::LOOP));
      UOp ri(Ops::RANGE, dtypes::int32, {UOp::const_(PyConst(16), dtypes::int32)}, Arg::tup(2 * i + 1, AxisType::LOOP));
      UOp idx = ro * UOp::const_(PyConst(16), dtypes::int32) + ri;
      UOp st(Ops::STORE, dtypes::void_,
             {UOp(Ops::INDEX, dtypes::float32, {buf, idx}), UOp::const_(PyConst((double)i), dtypes::float32)});
      UOp ei(Ops::END, dtypes::void_, {st, ri});
      outer_ends.push_back(UOp(Ops::END, dtypes::void_, {ei, ro}));
      outer.push_back(ro), inner.push_back(ri);
    }
    CFGContext cfg(UOp::sink(outer_ends));
    ASSERT_EQ(cfg.edges.size(), (size_t)(2 * n - 1)) << n;
    for (int i = 0; i < n; i++) {
      ASSERT_TRUE(cfg.edges.count(inner[(size_t)i])) << n << " " << i;
      EXPECT_EQ(cfg.edges.at(inner[(size_t)i]), outer[(size_t)i]) << n << " " << i;
      if (i == 0) continue;
      ASSERT_TRUE(cfg.edges.count(outer[(size_t)i])) << n << " " << i;
      EXPECT_EQ(cfg.edges.at(outer[(size_t)i]), outer_ends[(size_t)i - 1]) << n << " " << i;
    }
  }
}
