// Unit tests of the Tensor and the realize engine (lib/tensor, lib/engine/realize, lib/device Buffer). Expected values
// are the reference's (tinygrad a9069c17, DEV=CPU) for the same programs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <regex>

#include "lib/engine/realize.h"
#include "lib/renderer/renderer.h"
#include "lib/tensor.h"
#include "lib/uop/kernel_info.h"
#include "tests/support/devices.h"

using namespace tg;

namespace {

// stdout of f (the DEBUG prints go to stdout like the reference's print)
std::string capture_stdout(const std::function<void()>& f) {
  std::fflush(stdout);
  char path[] = "/tmp/tg_test_tensor_XXXXXX";
  int fd = mkstemp(path);
  int saved = dup(1);
  dup2(fd, 1);
  try {
    f();
  } catch (...) {
    std::fflush(stdout);
    dup2(saved, 1);
    close(saved), close(fd), unlink(path);
    throw;
  }
  std::fflush(stdout);
  dup2(saved, 1);
  close(saved);
  std::string out;
  FILE* fp = std::fopen(path, "r");
  for (int c; (c = std::fgetc(fp)) != EOF;) out += (char)c;
  std::fclose(fp), close(fd), unlink(path);
  return out;
}

}  // namespace

TEST(Tensor, RealizeAndRead) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}).reshape({2, 3});
  Tensor b = Tensor({{1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}});
  Tensor c = (a.matmul(b) + 1).relu();
  EXPECT_FALSE(c.is_realized());
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{5, 6, 11, 12}));
  EXPECT_FLOAT_EQ(a.mean().item<float>(), 3.5f);
  // realize() points the tensor at its buffer
  Tensor d = (a * 2).realize();
  EXPECT_TRUE(d.is_realized());
  EXPECT_TRUE(d.uop().has_buffer_identity() || d.uop().base().op() == Ops::BUFFER);
  EXPECT_EQ(d.to_vector<int>(), (std::vector<int>{2, 4, 6, 8, 10, 12}));
}

TEST(Tensor, ScalarsAndCreation) {
  EXPECT_EQ(Tensor::arange(5).to_vector<int>(), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(Tensor::eye(2).to_vector<float>(), (std::vector<float>{1, 0, 0, 1}));
  EXPECT_EQ(Tensor::full({2}, 7).to_vector<int>(), (std::vector<int>{7, 7}));
  EXPECT_EQ(Tensor::ones({2, 2}).sum().item<float>(), 4.0f);
  // a python scalar is a const tensor with no device; realizing it reads through a CPU copy like the reference
  EXPECT_EQ(Tensor(3.5).item<double>(), 3.5);
  EXPECT_TRUE(Tensor(2).device().is_none());
}

// every dtype survives host -> device -> host (values truncated like the reference's struct.pack of truncate[dtype])
TEST(Tensor, DataRoundTripEveryDtype) {
  std::vector<PyConst> ints{PyConst((pyint)0), PyConst((pyint)1), PyConst((pyint)-2), PyConst((pyint)127),
                            PyConst((pyint)-128)};
  std::vector<PyConst> floats{PyConst(0.0), PyConst(1.5), PyConst(-2.25), PyConst(1e3), PyConst(-0.0)};
  for (DType dt : {dtypes::int8, dtypes::int16, dtypes::int32, dtypes::int64}) {
    SCOPED_TRACE(dt.repr());
    Tensor t = Tensor::from_values(ints, {5}, dt);
    std::vector<PyConst> got = t.tolist_flat();
    ASSERT_EQ(got.size(), 5u);
    for (size_t i = 0; i < 5; i++) EXPECT_EQ((long long)got[i].as_int(), (long long)ints[i].as_int());
    EXPECT_EQ(t.data().size(), 5u * (size_t)dt.itemsize());
  }
  for (DType dt : {dtypes::uint8, dtypes::uint16, dtypes::uint32, dtypes::uint64}) {
    SCOPED_TRACE(dt.repr());
    Tensor t = Tensor::from_values({PyConst((pyint)0), PyConst((pyint)1), PyConst((pyint)200)}, {3}, dt);
    EXPECT_EQ(t.to_vector<uint64_t>(), (std::vector<uint64_t>{0, 1, 200}));
  }
  // uint8 wraps like truncate[uint8]
  EXPECT_EQ(Tensor::from_values({PyConst((pyint)-1), PyConst((pyint)256)}, {2}, dtypes::uint8).to_vector<int>(),
            (std::vector<int>{255, 0}));
  for (DType dt : {dtypes::float16, dtypes::bfloat16, dtypes::float32, dtypes::float64}) {
    SCOPED_TRACE(dt.repr());
    Tensor t = Tensor::from_values(floats, {5}, dt);
    std::vector<double> got = t.to_vector<double>();
    ASSERT_EQ(got.size(), 5u);
    for (size_t i = 0; i < 5; i++) EXPECT_EQ(got[i], floats[i].as_float());
    EXPECT_TRUE(std::signbit(got[4]));
  }
  Tensor b = Tensor::from_vector<bool>({true, false, true});
  EXPECT_EQ(b.dtype(), dtypes::bool_);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true}));
  // raw bytes
  std::vector<uint8_t> raw{1, 0, 0, 0, 2, 0, 0, 0};
  EXPECT_EQ(Tensor::from_bytes(raw, dtypes::int32).to_vector<int>(), (std::vector<int>{1, 2}));
  EXPECT_EQ(Tensor::from_bytes(raw, dtypes::int32).data(), raw);
}

TEST(Tensor, Assign) {
  // the reference: [1,2,3,4], then [2,3,4,5], then the view assign gives [2,9,9,5]
  Tensor a = Tensor::zeros({4}).contiguous().realize();
  a.assign(Tensor::from_vector<float>({1, 2, 3, 4})).realize();
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  a.assign(a + 1).realize();
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{2, 3, 4, 5}));
  a.shrink({{1, 3}}).assign(Tensor::from_vector<float>({9, 9}));
  a.realize();
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{2, 9, 9, 5}));
  // a copy of the handle sees the assign (python reference semantics)
  Tensor alias = a;
  a.assign(Tensor::full({4}, 0.5)).realize();
  EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{0.5, 0.5, 0.5, 0.5}));
  EXPECT_THROW(a.assign(Tensor::from_vector<int>({1, 2, 3, 4})), Error);  // dtype mismatch
}

TEST(Tensor, RealizedTogetherShareOneSchedule) {
  // reference: Tensor.realize(p, q) runs 3 kernels (one copy of x, then p and q)
  Tensor x = Tensor::from_vector<float>({1, 2, 3});
  Tensor p = x + 1, q = x * 2;
  auto [linear, var_vals] = Tensor::linear_with_vars({p.contiguous(), q.contiguous()});
  EXPECT_EQ(linear.op(), Ops::LINEAR);
  EXPECT_EQ(linear.nsrc(), 3u);
  Tensor x2 = Tensor::from_vector<float>({1, 2, 3});
  Tensor p2 = x2 + 1, q2 = x2 * 2;
  int64_t before = GlobalCounters::kernel_count;
  Tensor::realize_all({p2, q2});
  EXPECT_EQ(GlobalCounters::kernel_count - before, 3);
  EXPECT_EQ(p2.to_vector<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(q2.to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(GlobalCounters::kernel_count - before, 3);  // reading realized tensors runs nothing
}

TEST(Tensor, RandMatchesReference) {
  // Tensor.manual_seed(42); Tensor.rand(5).tolist() in the reference
  Tensor::manual_seed(42);
  std::vector<double> r = Tensor::rand({5}).to_vector<double>();
  std::vector<double> ref{0.38104248046875, 0.009775400161743164, 0.1128007173538208, 0.1176995038986206,
                          0.505361795425415};
  ASSERT_EQ(r.size(), ref.size());
  for (size_t i = 0; i < r.size(); i++) EXPECT_DOUBLE_EQ(r[i], ref[i]);
  // the counter advances: the next draw differs, a new seed repeats
  std::vector<double> r2 = Tensor::rand({5}).to_vector<double>();
  EXPECT_NE(r2, r);
  Tensor::manual_seed(42);
  EXPECT_EQ(Tensor::rand({5}).to_vector<double>(), r);
  EXPECT_THROW(Tensor::rand({2}, dtypes::int32), Error);
  EXPECT_THROW(Tensor::randint({2}, 5, 5), Error);
}

TEST(Tensor, UserErrors) {
  Tensor a = Tensor::ones({2, 3});
  // matmul shape mismatch: "cannot dot (2, 3) and (2, 3)"
  EXPECT_THROW(a.matmul(Tensor::ones({2, 3})), Error);
  // reshape to a wrong size: "size mismatch, can't reshape ((2, 3)) -> ((4,))"
  EXPECT_THROW(a.reshape({4}), Error);
  // axis out of range: "dim=5 out of range [-2, 1]"
  EXPECT_THROW(a.sum(5), Error);
  EXPECT_THROW(a.permute({0, 0}), Error);
  // broadcasting mismatch (the reference raises when the graph is used)
  EXPECT_THROW((a + Tensor::ones({4})).realize(), Error);
  // weak dtypes have no storage
  EXPECT_THROW(Tensor::linear_with_vars({Tensor::from_vector<int>({0, 2, 1}).one_hot(4).contiguous()}), Error);
  try {
    Tensor::linear_with_vars({Tensor::from_vector<int>({0, 2, 1}).one_hot(4).contiguous()});
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot realize a weak dtype; cast to a concrete dtype first");
  }
  // an unknown device names the registered ones
  try {
    Tensor::from_vector<float>({1}).to(Arg("NOPE"));
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NOPE"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("CPU"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Tensor::from_values({PyConst(1.0)}, {1}, dtypes::weakfloat), Error);
  EXPECT_THROW(Tensor::ones({2}).item<float>(), Error);
}

// a device whose compiler refuses everything: a failed realize leaves tensors that say so when read
namespace {
class FailingCompiler : public Compiler {
 public:
  std::vector<uint8_t> compile(const std::string&) override { throw CompileError("FAIL: this compiler refuses"); }
};
class FailDevice : public Compiled {
 public:
  // the CPU device is looked up on use: a factory runs under the registry's lock
  explicit FailDevice(const std::string& d) : Compiled(d) {}
  Allocator& allocator() override { return get_device("CPU").allocator(); }
  Compiler& compiler() override { return compiler_; }
  const Renderer& renderer() override { return get_device("CPU").renderer(); }
  std::unique_ptr<Program> runtime(const std::string&, std::span<const uint8_t>) override { return nullptr; }

 private:
  FailingCompiler compiler_;
};
}  // namespace

TEST(Tensor, FailedRealizeIsAnErrorWhenRead) {
  register_device("FAIL", [](const std::string& d) { return std::make_unique<FailDevice>(d); });
  Tensor a = Tensor::from_vector<float>({1, 2, 3}, DType(), Arg("FAIL"));
  Tensor b = a * 2;
  EXPECT_THROW(b.realize(), CompileError);
  try {
    std::vector<float> v = b.to_vector<float>();
    ADD_FAILURE() << "expected an error, got " << v.size() << " values from " << b.uop().repr();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("realize fail"), std::string::npos) << e.what();
  }
}

TEST(Tensor, DevInterpSelectsTheInterpreter) {
  setenv("DEV", "INTERP", 1);
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4});
  EXPECT_EQ(a.device_str(), "INTERP");
  Tensor s = (a * a).sum();
  EXPECT_EQ(s.item<float>(), 30.0f);
  unsetenv("DEV");
  EXPECT_EQ(Tensor::from_vector<float>({1}).device_str(), "CPU");
  // to() moves between devices
  Tensor c = Tensor::from_vector<float>({5, 6}).to(Arg("INTERP"));
  EXPECT_EQ(c.device_str(), "INTERP");
  EXPECT_EQ((c + 1).to_vector<float>(), (std::vector<float>{6, 7}));
}

TEST(Engine, Debug2LineFormat) {
  // the reference's line: "*** CPU        1 copy       16 B,     CPU <- PYTHON             arg  2 mem   0.00 GB tm
  //   1206.43us/     1.21ms (      0 GFLOPS    0|0      GB/s)"
  std::string out = capture_stdout([] {
    Context ctx({{"DEBUG", 2}});
    Tensor a = Tensor::from_vector<float>({1, 2, 3, 4});
    (a + 1).realize();
  });
  std::vector<std::string> lines;
  for (size_t p = 0, q; p < out.size(); p = q + 1) {
    q = out.find('\n', p);
    if (q == std::string::npos) q = out.size();
    std::string l = ansistrip(out.substr(p, q - p));
    if (l.rfind("***", 0) == 0) lines.push_back(l);
  }
  ASSERT_EQ(lines.size(), 2u) << out;
  static const std::regex fmt(
      R"(\*\*\* CPU     +\d+ .{46} arg +\d+ mem +\d+\.\d\d GB tm +\d+\.\d\d(us|ms|s ) */ *\d+\.\d\dms \( +\d+ GFLOPS +\d+\|\d+ +GB/s\))");
  for (const std::string& l : lines) EXPECT_TRUE(std::regex_match(l, fmt)) << l;
  EXPECT_EQ(lines[0].substr(0, 17), lines[0].substr(0, 4) + "CPU     " + lines[0].substr(12, 5));
  EXPECT_NE(lines[0].find("copy       16 B,     CPU <- PYTHON "), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(" E_4 "), std::string::npos) << lines[1];
}

TEST(Engine, Debug4PrintsTheSource) {
  std::string out = capture_stdout([] {
    Context ctx({{"DEBUG", 4}});
    (Tensor::from_vector<float>({1, 2, 3}) * 3.5).realize();
  });
  EXPECT_NE(out.find("define"), std::string::npos) << out;  // LLVM IR of the kernel
  EXPECT_NE(out.find("E_3"), std::string::npos);
}

TEST(Engine, CompiledProgramsAreCached) {
  Tensor::from_vector<float>({1, 2}).add(7).realize();
  size_t n = to_program_cache_size();
  Tensor::from_vector<float>({3, 4}).add(7).realize();  // the same kernel
  EXPECT_EQ(to_program_cache_size(), n);
}

TEST(Buffer, ViewsAndCopies) {
  auto b = std::make_shared<Buffer>("CPU", 4, dtypes::float32);
  EXPECT_FALSE(b->is_allocated());
  std::vector<float> v{1, 2, 3, 4};
  b->copyin({reinterpret_cast<const uint8_t*>(v.data()), 16});
  EXPECT_TRUE(b->is_allocated());
  auto view = b->view(2, dtypes::float32, 8);
  std::vector<uint8_t> out = view->ensure_allocated().as_bytes();
  float f[2];
  std::memcpy(f, out.data(), 8);
  EXPECT_EQ(f[0], 3.0f);
  EXPECT_EQ(f[1], 4.0f);
  auto host = std::make_shared<Buffer>("PYTHON", 4, dtypes::float32);
  host->ensure_allocated().copy_from(*b);
  EXPECT_EQ(host->as_bytes(), b->as_bytes());
  EXPECT_THROW(b->view(1, dtypes::float32, 16), DeviceError);
  EXPECT_THROW(std::make_shared<Buffer>("PYTHON", 2, dtypes::float32)->copy_from(*b), DeviceError);
}

TEST(Tensor, MoreMixinsMatchReference) {
  // expected values printed by the reference for the same programs
  Tensor a = Tensor::from_vector<float>({3, 1, 2, 5, 4, 0}).reshape({2, 3});
  EXPECT_EQ(Tensor::einsum("ij,kj->ik", {a, a}).to_vector<float>(), (std::vector<float>{14, 19, 19, 41}));
  EXPECT_EQ(a.argsort(1).to_vector<int>(), (std::vector<int>{1, 2, 0, 2, 1, 0}));
  EXPECT_EQ(a.cummax(1).first.to_vector<float>(), (std::vector<float>{3, 3, 3, 5, 5, 5}));
  EXPECT_EQ(a.diagonal().to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(a.unfold(1, 2, 1).to_vector<float>(), (std::vector<float>{3, 1, 1, 2, 5, 4, 4, 0}));
  Tensor idx = Tensor::from_vector<int32_t>({2, 0}).reshape({2, 1});
  EXPECT_EQ(Tensor::zeros({2, 3}).scatter(1, idx, 7.0).to_vector<float>(), (std::vector<float>{0, 0, 7, 7, 0, 0}));
  // fmod uses TRUNC, which the CPU device's LLVM renderer renders as the undeclared @llvm.trunc.float (like the
  // reference's DEV=CPU:LLVM): checked on the interpreter
  EXPECT_EQ(a.to(Arg("INTERP")).fmod(2).to_vector<float>(), (std::vector<float>{1, 1, 0, 1, 0, 0}));
  EXPECT_NEAR(a.logaddexp(a).to_vector<float>()[0], 3.6931471824645996, 1e-6);
}

// float16 arithmetic on INTERP as on the reference's PYTHON device: its Python (3.11) has no half memoryviews, so its
// PythonRenderer drops half and codegen emulates it as float: half in memory, float arithmetic. Values printed by
//   x = Tensor([i*0.37-3 for i in range(16)], dtype=dtypes.half); print((x*x+1000).tolist())
// with DEV=PYTHON (and DEV=CPU, the same) in tinygrad a9069c17
TEST(Tensor, HalfArithmeticOnInterpIsTheReferences) {
  const std::vector<float> want = {1009.0f,          1006.9214477539062f, 1005.1065673828125f, 1003.57080078125f,
                                   1002.3089599609375f, 1001.3234252929688f, 1000.6080932617188f, 1000.1680297851562f,
                                   1000.0015869140625f, 1000.1089477539062f, 1000.4902954101562f, 1001.1455688476562f,
                                   1002.0748291015625f, 1003.2745361328125f, 1004.7510375976562f, 1006.5064697265625f};
  for (const char* dev : {"INTERP", "CPU"}) {
    SCOPED_TRACE(dev);
    std::vector<double> x;
    for (int i = 0; i < 16; i++) x.push_back(i * 0.37 - 3);
    Tensor t = Tensor::from_vector<double>(x, dtypes::half).to(Arg(dev));
    std::vector<float> got = (t * t + 1000).cast(dtypes::float32).to_vector<float>();
    EXPECT_EQ(got, want);
  }
}

// Tensor has every option of its reference twin: the op surface is the mixins' (lib/mixin), inherited by Tensor and
// UOp alike. Values printed by tests/parity/gen_tensor_surface_values.py (tinygrad a9069c17, DEV=CPU).
TEST(Tensor, EveryOpOptionOfTheReference) {
  auto ints = [](const Shape& sh) {
    std::vector<int64_t> r;
    for (const sint& d : sh) r.push_back((int64_t)d.i());
    return r;
  };
  using V = std::vector<int64_t>;
  Tensor a = Tensor::from_vector<float>({3, 1, 2, 5, 4, 0}).reshape({2, 3});
  // reshape with None entries: None keeps that axis's size
  EXPECT_EQ(ints(a.reshape({std::nullopt, 3, 1}).shape()), (V{2, 3, 1}));
  EXPECT_EQ(ints(a.reshape({-1, std::nullopt}).shape()), (V{2, 3}));
  EXPECT_THROW(a.reshape({6, std::nullopt, std::nullopt}), Error);
  // split by a list of sizes
  std::vector<Tensor> parts = a.split(std::vector<int64_t>{1, 2}, 1);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].to_vector<float>(), (std::vector<float>{3, 5}));
  EXPECT_EQ(parts[1].to_vector<float>(), (std::vector<float>{1, 2, 4, 0}));
  // avg_pool2d with padding, counting the padding or not
  Tensor x = Tensor::arange(16, std::nullopt, 1, dtypes::float32).reshape({1, 1, 4, 4});
  EXPECT_EQ(x.avg_pool2d({2, 2}, IntTuple(2), 1, 1).flatten().to_vector<float>(),
            (std::vector<float>{0.0, 0.75, 0.75, 3.0, 7.5, 4.5, 3.0, 6.75, 3.75}));
  EXPECT_EQ(x.avg_pool2d({2, 2}, IntTuple(2), 1, 1, false, false).flatten().to_vector<float>(),
            (std::vector<float>{0.0, 1.5, 3.0, 6.0, 7.5, 9.0, 12.0, 13.5, 15.0}));
  // nll_loss with class weights and an ignored class
  Tensor logp({{-1.0, -2.0, -0.5}, {-0.3, -1.5, -2.5}, {-2.0, -0.1, -3.0}});
  Tensor Y = Tensor::from_vector<int32_t>({0, 2, 1});
  Tensor w = Tensor::from_vector<float>({1.0, 2.0, 0.5});
  EXPECT_FLOAT_EQ(logp.nll_loss(Y, w).item<float>(), 0.699999988079071f);
  EXPECT_FLOAT_EQ(logp.nll_loss(Y, std::nullopt, 2).item<float>(), 0.550000011920929f);
  EXPECT_FLOAT_EQ(logp.nll_loss(Y, w, 1, "sum").item<float>(), 2.25f);
  // sequential over Tensor functions
  EXPECT_EQ(a.sequential({[](const Tensor& t) { return t * 2; }, [](const Tensor& t) { return t + 1; }})
                .to_vector<float>(),
            (std::vector<float>{7, 3, 5, 11, 9, 1}));
  // std (the reference's name on UOp and Tensor alike)
  EXPECT_NEAR(a.std().item<float>(), 1.870829, 1e-6);
  EXPECT_EQ(a.std(1).to_vector<float>(), (std::vector<float>{1.0f, 2.6457512378692627f}));
  EXPECT_EQ(ints(a.uop().std(1).shape()), (V{2}));
  // scaled dot-product attention, plain and causal (printed rounded to 6 digits)
  Tensor q = Tensor::arange(24, std::nullopt, 1, dtypes::float32).reshape({1, 2, 3, 4}) / 10;
  Tensor k = (Tensor::arange(24, std::nullopt, 1, dtypes::float32).reshape({1, 2, 3, 4}) / 7).cos();
  Tensor v = Tensor::arange(24, std::nullopt, 1, dtypes::float32).reshape({1, 2, 3, 4}).sin();
  auto near = [](const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
  };
  near(q.scaled_dot_product_attention(k, v).flatten().to_vector<float>(),
       {0.030268,  0.108638, 0.087127, -0.014489, -0.062603, 0.145416, 0.21974,   0.092036,
        -0.119925, 0.202575, 0.338829, 0.163565,  -0.306838, 0.1891,   0.51118,   0.363283,
        -0.375899, 0.232386, 0.627016, 0.445171,  -0.427271, 0.273178, 0.722468,  0.507524});
  near(q.scaled_dot_product_attention(k, v, std::nullopt, 0.0, true).flatten().to_vector<float>(),
       {0.0,       0.841471, 0.909297, 0.14112,   -0.320023, 0.080152, 0.406636,  0.35926,
        -0.119925, 0.202575, 0.338829, 0.163565,  -0.536573, 0.420167, 0.990607,  0.650288,
        -0.492901, 0.17753,  0.684741, 0.562403,  -0.427271, 0.273178, 0.722468,  0.507524});
  EXPECT_THROW(q.scaled_dot_product_attention(k, v, k.lt(0), 0.0, true), Error);
  // the initializers of mixin/rand.py, drawn like the reference's
  Tensor::manual_seed(42);
  EXPECT_EQ(Tensor::kaiming_uniform({2, 3}).to_vector<float>(),
            (std::vector<float>{-0.3364458382129669f, -1.3864952325820923f, -1.0951101779937744f, -1.0812550783157349f,
                                0.015164689160883427f, -0.36170876026153564f}));
  Tensor::manual_seed(42);
  EXPECT_EQ(Tensor::kaiming_normal({2, 3}, 0.5).to_vector<float>(),
            (std::vector<float>{1.429659366607666f, -0.13579116761684418f, 1.1979912519454956f, -0.5584267973899841f,
                                -0.6349837183952332f, -0.3197815716266632f}));
  Tensor::manual_seed(42);
  EXPECT_EQ(Tensor::randperm(6).to_vector<int>(), (std::vector<int>{1, 2, 3, 5, 0, 4}));
  // random UOps have no RNG state, as in the reference
  EXPECT_THROW(UOp::rand({2}), Error);
}
