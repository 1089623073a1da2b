// The C++ Tensor and realize engine against the reference (gen_tensor_goldens.py: tests/data/tensor_goldens_clang.txt
// from the reference's DEV=CPU for our DEV=CPU, tensor_goldens.txt from its DEV=CPU:LLVM for our DEV=CPU:LLVM).
// CallifyGoldens: the same programs written with the C++ Tensor API give the reference's callify CALL (BUFFER slots
// renumbered by first appearance).
// EngineGoldens: the reference's final LINEAR of each program, run by the C++ engine (codegen, compile, run) on CPU
// and on INTERP: kernel names and linearized op sequences equal the reference's (CPU), values within 1e-5.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <regex>

#include "backends/cpu/cpu.h"
#include "backends/interp/interp.h"
#include "lib/codegen/late/program.h"
#include "lib/device.h"
#include "lib/engine/realize.h"
#include "lib/schedule/schedule.h"
#include "lib/tensor.h"
#include "lib/uop/kernel_info.h"
#include "lib/uop/serialize.h"
#include "tests/parity/tensor_programs.h"
#include "tests/support/tensor_golden_checks.h"
#include "tests/support/tensor_goldens.h"

using namespace tg;
using tg::test::expect_values;

namespace {

const std::vector<TensorGolden>& goldens() {
  static const std::vector<TensorGolden> g = [] {
    tg::cpu::register_device();
    tg::interp::register_device();
    // the reference's programs for the CPU renderer in use: DEV=CPU (CLANG, the default) or DEV=CPU:LLVM
    const std::string dir = TG_TEST_DATA;
    if (get_device("CPU").renderer().target.renderer == "LLVM") return load_tensor_goldens(dir + "/tensor_goldens.txt");
    std::vector<TensorGolden> g = load_tensor_goldens(dir + "/tensor_goldens_clang.txt");
    // the CLANG renderer keeps the LLVM renderer's float16 emulation: the reference's C computes __fp16 natively
    // (promoted to float inside an expression), which it does not reproduce; those kernels are the DEV=CPU:LLVM ones
    for (const TensorGolden& l : load_tensor_goldens(dir + "/tensor_goldens.txt"))
      for (TensorGolden& c : g)
        if (c.name == l.name && (c.name == "cast_f2h" || c.name == "half_math")) c.kernels = l.kernels;
    return g;
  }();
  return g;
}

std::vector<uint8_t> unhex(const std::string& h) {
  std::vector<uint8_t> out(h.size() / 2);
  for (size_t i = 0; i < out.size(); i++) out[i] = (uint8_t)std::stoi(h.substr(2 * i, 2), nullptr, 16);
  return out;
}

// BUFFER slots are renumbered per case in the goldens: move them out of the way of this process's buffers
std::vector<std::string> offset_slots(const std::vector<std::string>& lines, int64_t base, const std::string& device) {
  static const std::regex slot(R"(P\(i(-?\d+),)");
  std::vector<std::string> out;
  for (std::string l : lines) {
    if (l.rfind("BUFFER ", 0) == 0) {
      std::smatch m;
      if (std::regex_search(l, m, slot) && m[1] != "-1")
        l = m.prefix().str() + "P(i" + std::to_string(std::stoll(m[1]) + base) + "," + m.suffix().str();
    }
    if (device != "CPU") {
      for (size_t p; (p = l.find("s3:CPU")) != std::string::npos;)
        l.replace(p, 6, "s" + std::to_string(device.size()) + ":" + device);
    }
    out.push_back(l);
  }
  return out;
}

void run_golden_linear(const TensorGolden& c, size_t case_idx, const std::string& device) {
  int64_t base = 1000000 * (int64_t)(case_idx + 1) + (device == "CPU" ? 0 : 500000);
  std::vector<std::string> lines = offset_slots(c.linear, base, device);
  std::vector<UOp> pool;
  for (const std::string& l : lines) pool.push_back(decode_node(l, pool));
  UOp linear = pool.back();
  for (const auto& [idx, hex] : c.inputs) {
    std::shared_ptr<Buffer> b = uop_buffer(pool.at((size_t)idx));
    b->ensure_allocated();
    b->copyin(unhex(hex));
  }
  VarVals vv(c.var_vals.begin(), c.var_vals.end());
  UOp compiled = compile_linear(linear);
  ASSERT_EQ(compiled.nsrc(), c.kernels.size()) << c.name;
  if (device == "CPU") tg::test::expect_kernels(compiled, c);
  run_linear(compiled, vv);
  for (const TensorGoldenOut& o : c.outs) {
    if (o.index < 0) continue;  // a virtual output (no device, e.g. arange): computed by .tolist(), not by the LINEAR
    const UOp& b = pool.at((size_t)o.index);
    std::shared_ptr<Buffer> buf = uop_buffer(b);
    expect_values(buf->as_bytes(), b.dtype(), o, c.name + " on " + device);
  }
}

// gen_tensor_goldens.py's renumber: BUFFER slots by first appearance (Variables keep -1)
std::vector<std::string> renumber(const std::vector<std::string>& lines) {
  static const std::regex slot(R"(P\(i(-?\d+),)");
  std::map<std::string, int> m;
  std::vector<std::string> out;
  for (std::string l : lines) {
    std::smatch mm;
    if (l.rfind("BUFFER ", 0) == 0 && std::regex_search(l, mm, slot) && mm[1] != "-1") {
      auto it = m.emplace(mm[1], (int)m.size()).first;
      l = mm.prefix().str() + "P(i" + std::to_string(it->second) + "," + mm.suffix().str();
    }
    out.push_back(l);
  }
  return out;
}

const TensorGolden* golden(const std::string& name) {
  for (const TensorGolden& g : goldens())
    if (g.name == name) return &g;
  return nullptr;
}

std::vector<Tensor> contiguous_outs(const tensor_programs::Program& p) {
  std::vector<Tensor> outs;
  for (const Tensor& t : p.second()) outs.push_back(t.contiguous());
  return outs;
}

}  // namespace

TEST(CallifyGoldens, TransformToCall) {
  int checked = 0;
  for (const auto& p : tensor_programs::programs()) {
    SCOPED_TRACE(p.first);
    const TensorGolden* g = golden(p.first);
    ASSERT_NE(g, nullptr) << p.first;
    std::vector<Tensor> outs = contiguous_outs(p);
    if (!g->error.empty()) {
      // the reference refused to realize (a weak dtype): so does linear_with_vars
      try {
        Tensor::linear_with_vars(outs);
        ADD_FAILURE() << p.first << ": expected the error " << g->error;
      } catch (const tg::Error& e) {
        EXPECT_EQ(std::string(e.what()), g->error);
      }
      continue;
    }
    CallifyResult r = Tensor::callify_sink(outs);
    std::vector<std::string> got = renumber(encode_graph(r.call));
    EXPECT_EQ(got, g->callify) << p.first;
    checked++;
  }
  EXPECT_EQ(checked + 1, (int)tensor_programs::programs().size());
  EXPECT_EQ(tensor_programs::programs().size(), goldens().size());
}

// the reference's kernels of one program on its PYTHON device
const TensorGolden* python_kernels(const std::string& name) {
  static const std::vector<TensorGolden> g =
      load_tensor_goldens(std::string(TG_TEST_DATA) + "/tensor_goldens_python_kernels.txt");
  for (const TensorGolden& c : g)
    if (c.name == name) return &c;
  return nullptr;
}

// End to end: the C++ program is scheduled by lib/schedule, compiled and run; kernel count (and on CPU, names and
// op sequences; on INTERP, the names of the reference's DEV=PYTHON run) equal the reference's, values within 1e-5. Run
// on CPU and on INTERP (DEV=INTERP).
class EndToEnd : public ::testing::TestWithParam<std::string> {};

TEST_P(EndToEnd, RealizeProgram) {
  const std::string device = GetParam();
  goldens();
  setenv("DEV", device.c_str(), 1);
  int ran = 0;
  for (const auto& p : tensor_programs::programs()) {
    SCOPED_TRACE(p.first);
    const TensorGolden* g = golden(p.first);
    ASSERT_NE(g, nullptr);
    if (!g->error.empty()) continue;
    try {
      std::vector<Tensor> outs = contiguous_outs(p);
      auto [linear, var_vals] = Tensor::linear_with_vars(outs);
      UOp compiled = compile_linear(linear);
      if (device == "CPU") {
        EXPECT_EQ(compiled.nsrc(), g->kernels.size()) << p.first << " kernel count";
      } else {
        // INTERP is the reference's PYTHON device, which holds the host data too: no copies, and the kernels of the
        // reference's DEV=PYTHON run (tensor_goldens_python_kernels.txt)
        const TensorGolden* py = python_kernels(p.first);
        ASSERT_NE(py, nullptr) << p.first;
        ASSERT_EQ(compiled.nsrc(), py->kernels.size()) << p.first << " kernel count";
        for (size_t k = 0; k < py->kernels.size(); k++) {
          const UOp& ast = compiled.src(k).src(0);
          EXPECT_EQ(ast.op() == Ops::COPY ? "copy" : ansistrip(ast.arg().as<ProgramInfo>()->name), py->kernels[k].first)
              << p.first << " kernel " << k;
        }
      }
      if (device == "CPU" && compiled.nsrc() == g->kernels.size())  // rand's op sequences: see run_golden_linear
        tg::test::expect_kernels(compiled, *g, !(p.first.rfind("rand", 0) == 0 || p.first == "uniform"));
      run_linear(compiled, var_vals);
      ASSERT_EQ(outs.size(), g->outs.size());
      for (size_t i = 0; i < outs.size(); i++) {
        std::vector<uint8_t> bytes = tg::test::tensor_bytes(outs[i]);
        EXPECT_EQ(bytes.size() / (size_t)outs[i].dtype().itemsize(), g->outs[i].values.size()) << p.first;
        expect_values(bytes, outs[i].dtype(), g->outs[i], p.first + " on " + device);
      }
      ran++;
    } catch (const std::exception& e) {
      ADD_FAILURE() << p.first << ": " << e.what();
    }
  }
  unsetenv("DEV");
  EXPECT_EQ(ran + 1, (int)tensor_programs::programs().size());
}

INSTANTIATE_TEST_SUITE_P(Devices, EndToEnd, ::testing::Values("CPU", "INTERP"));

class EngineGoldens : public ::testing::TestWithParam<std::string> {};

TEST_P(EngineGoldens, RunReferenceLinear) {
  const auto& g = goldens();
  ASSERT_GT(g.size(), 60u);
  int ran = 0;
  for (size_t i = 0; i < g.size(); i++) {
    if (!g[i].error.empty()) continue;
    SCOPED_TRACE(g[i].name);
    try {
      run_golden_linear(g[i], i, GetParam());
    } catch (const std::exception& e) {
      ADD_FAILURE() << g[i].name << ": " << e.what();
    }
    ran++;
  }
  collect_buffers();
  EXPECT_GT(ran, 60);
}

INSTANTIATE_TEST_SUITE_P(Devices, EngineGoldens, ::testing::Values("CPU", "INTERP"));
