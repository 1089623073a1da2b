// The CL device against the reference's DEV=CL run on PoCL (tests/data/tensor_goldens_cl.txt, written by
// gen_tensor_goldens.py with GOLDEN_SOURCES=1). Every tensor program of test_tensor_goldens, written with the C++
// Tensor API, is scheduled, compiled by the OpenCLRenderer and the platform's compiler, and run on CL: the kernels
// (names, op sequences, OpenCL C) equal the reference's and so do the values (within 1e-5: the same source on the same
// device gives the same bits; the bound only absorbs printing). The reference's own LINEAR of each program runs too,
// and so do the programs of its test_uops.py (uops_kernel_goldens_cl.txt).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "backends/cl/cl.h"
#include "backends/cpu/cpu.h"
#include "backends/interp/interp.h"
#include "lib/codegen/codegen.h"
#include "lib/codegen/late/program.h"
#include "lib/device.h"
#include "lib/engine/realize.h"
#include "lib/tensor.h"
#include "lib/uop/kernel_info.h"
#include "lib/uop/serialize.h"
#include "tests/parity/tensor_programs.h"
#include "tests/support/tensor_golden_checks.h"
#include "tests/support/uops_goldens.h"

using namespace tg;
using tg::test::expect_values;

namespace {

const std::vector<TensorGolden>& goldens() {
  static const std::vector<TensorGolden> g = [] {
    cl::register_device();
    cpu::register_device();     // .tolist() of a virtual output (arange) runs on CPU, as in the reference
    interp::register_device();  // host data of Tensors built from C++ values
    return load_tensor_goldens(std::string(TG_TEST_DATA) + "/tensor_goldens_cl.txt");
  }();
  return g;
}

const TensorGolden* golden(const std::string& name) {
  for (const TensorGolden& g : goldens())
    if (g.name == name) return &g;
  return nullptr;
}

// The goldens come from a PoCL without cl_khr_fp16 (half is stored as ushort and computed in float). A device with
// it computes half natively: other kernels, the same values.
bool golden_kernels_apply(const TensorGolden& g) {
  bool has_half = false;
  for (const TensorGoldenOut& o : g.outs) has_half |= o.dtype == "half";
  return !has_half || get_device("CL").renderer().target.arch.find("cl_khr_fp16") == std::string::npos;
}

// the kernels of a compiled LINEAR against the golden's: count, names, op sequences, sources
void expect_kernels(const UOp& compiled, const TensorGolden& g) {
  if (!golden_kernels_apply(g)) return;
  ASSERT_EQ(compiled.nsrc(), g.kernels.size()) << g.name << ": kernel count";
  tg::test::expect_kernels(compiled, g, true, true);
}

std::vector<uint8_t> unhex(const std::string& h) {
  std::vector<uint8_t> out(h.size() / 2);
  for (size_t i = 0; i < out.size(); i++) out[i] = (uint8_t)std::stoi(h.substr(2 * i, 2), nullptr, 16);
  return out;
}

// scripts/install-deps.sh installs PoCL: a machine without an OpenCL device fails here, it does not skip
void require_cl() {
  goldens();
  ASSERT_FALSE(cl::list_devices().empty()) << "no OpenCL device: install pocl-opencl-icd (scripts/install-deps.sh)";
}

}  // namespace

TEST(CLGoldens, EveryProgramHasSources) {
  size_t n = 0;
  for (const TensorGolden& g : goldens()) {
    if (!g.error.empty()) continue;
    size_t programs = 0;
    for (const auto& k : g.kernels) programs += k.first != "copy";
    EXPECT_EQ(g.sources.size(), programs) << g.name;
    n++;
  }
  EXPECT_EQ(n + 1, tensor_programs::programs().size());
}

// the C++ programs end to end on CL
TEST(CLGoldens, RealizeProgram) {
  require_cl();
  if (HasFatalFailure()) return;
  setenv("DEV", "CL", 1);
  int ran = 0;
  for (const auto& p : tensor_programs::programs()) {
    SCOPED_TRACE(p.first);
    const TensorGolden* g = golden(p.first);
    ASSERT_NE(g, nullptr);
    if (!g->error.empty()) continue;
    try {
      std::vector<Tensor> outs;
      for (const Tensor& t : p.second()) outs.push_back(t.contiguous());
      auto [linear, var_vals] = Tensor::linear_with_vars(outs);
      UOp compiled = compile_linear(linear);
      expect_kernels(compiled, *g);
      run_linear(compiled, var_vals);
      ASSERT_EQ(outs.size(), g->outs.size());
      for (size_t i = 0; i < outs.size(); i++) {
        if (g->outs[i].index >= 0) {  // virtual outputs have none
          EXPECT_EQ(outs[i].device().str(), "CL");
        }
        std::vector<uint8_t> bytes = tg::test::tensor_bytes(outs[i]);
        EXPECT_EQ(bytes.size() / (size_t)outs[i].dtype().itemsize(), g->outs[i].values.size()) << p.first;
        expect_values(bytes, outs[i].dtype(), g->outs[i], p.first + " on CL");
      }
      ran++;
    } catch (const std::exception& e) {
      ADD_FAILURE() << p.first << ": " << e.what();
    }
  }
  unsetenv("DEV");
  EXPECT_EQ(ran + 1, (int)tensor_programs::programs().size());
}

// the reference's LINEAR of each program, decoded and run by the C++ engine on CL
TEST(CLGoldens, RunReferenceLinear) {
  require_cl();
  if (HasFatalFailure()) return;
  const auto& gs = goldens();
  static const std::regex slot(R"(P\(i(-?\d+),)");
  int ran = 0;
  for (size_t ci = 0; ci < gs.size(); ci++) {
    const TensorGolden& c = gs[ci];
    if (!c.error.empty()) continue;
    SCOPED_TRACE(c.name);
    try {
      // BUFFER slots are renumbered per case in the goldens: move them out of the way of this process's buffers
      std::vector<UOp> pool;
      for (std::string l : c.linear) {
        std::smatch m;
        if (l.rfind("BUFFER ", 0) == 0 && std::regex_search(l, m, slot) && m[1] != "-1")
          l = m.prefix().str() + "P(i" + std::to_string(std::stoll(m[1]) + 3000000 + 1000 * (int64_t)ci) + "," +
              m.suffix().str();
        pool.push_back(decode_node(l, pool));
      }
      for (const auto& [idx, hex] : c.inputs) {
        std::shared_ptr<Buffer> b = uop_buffer(pool.at((size_t)idx));
        b->ensure_allocated();
        b->copyin(unhex(hex));
      }
      UOp compiled = compile_linear(pool.back());
      expect_kernels(compiled, c);
      run_linear(compiled, VarVals(c.var_vals.begin(), c.var_vals.end()));
      for (const TensorGoldenOut& o : c.outs) {
        if (o.index < 0) continue;  // a virtual output (arange): computed by .tolist(), not by the LINEAR
        const UOp& b = pool.at((size_t)o.index);
        expect_values(uop_buffer(b)->as_bytes(), b.dtype(), o, c.name + " on CL");
      }
      ran++;
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.name << ": " << e.what();
    }
  }
  EXPECT_GT(ran, 80);
}

// The hand-built UOp programs of the reference's test_uops.py, lowered by the reference for DEV=CL
// (uops_kernel_goldens_cl.txt, gen_uops_kernel_goldens.py): each linear program is rendered by the C++ OpenCLRenderer,
// built and run on CL on the reference's input buffers; every output buffer equals the reference's bytes.
TEST(CLGoldens, TestUopsPrograms) {
  require_cl();
  if (HasFatalFailure()) return;
  Compiled& dev = get_device("CL");
  static const UopsGoldens g = load_uops_goldens(std::string(TG_TEST_DATA) + "/uops_kernel_goldens_cl.txt");
  int ran = 0;
  for (const UopsCase& c : g.cases) {
    if (c.is_linear || c.program.empty()) continue;
    SCOPED_TRACE(c.test + " #" + std::to_string(c.k));
    try {
      std::string src = dev.renderer().render(tg::test::dec_linear(c.program));
      size_t k = src.find("__kernel void "), open = src.find('(', k);
      ASSERT_NE(k, std::string::npos) << src;
      std::string name = src.substr(k + 14, open - k - 14);
      std::shared_ptr<Program> prg = dev.compile(src, name);
      std::vector<void*> bufs;
      for (const auto& b : c.bufs) {
        size_t n = std::max<size_t>(b.before.size(), 1);
        void* p = dev.allocator().alloc(n);
        if (!b.before.empty()) dev.allocator().copyin(p, b.before);
        bufs.push_back(p);
      }
      std::vector<std::optional<pyint>> vals;
      for (const auto& v : c.vals) vals.push_back(v == "-" ? std::nullopt : std::optional<pyint>(std::stoll(v)));
      prg->run(bufs, vals, c.global, c.local, true);
      for (size_t i = 0; i < c.bufs.size(); i++) {
        std::vector<uint8_t> after(c.bufs[i].after.size());
        if (!after.empty()) dev.allocator().copyout(after, bufs[i]);
        EXPECT_EQ(after, c.bufs[i].after) << "buffer " << i << " (" << c.bufs[i].dtype << ")\n" << src;
        dev.allocator().free(bufs[i], std::max<size_t>(c.bufs[i].before.size(), 1));
      }
      ran++;
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GE(ran, 400);
}

// Reduces the hand-coded optimizer groups across a workgroup (GROUPTOP: partial sums in __local memory, a barrier with
// the local memory fence, then one thread's sum): the OpenCL source of each kernel equals the reference's
// (tests/data/cl_barrier_goldens.txt, from tests/parity/gen_cl_barrier_goldens.py), and the sums are right
TEST(CLGoldens, GroupedReducesWithLocalMemoryAndBarriers) {
  goldens();  // registers the devices
  std::ifstream in(std::string(TG_TEST_DATA) + "/cl_barrier_goldens.txt");
  ASSERT_TRUE(in) << "tests/data/cl_barrier_goldens.txt";
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> want;  // case -> (kernel, source)
  std::string line, cur;
  while (std::getline(in, line)) {
    if (line.rfind("case ", 0) == 0) cur = line.substr(5);
    if (line.rfind("kernel ", 0) != 0) continue;
    std::istringstream ls(line.substr(7));
    std::string name;
    size_t n = 0;
    ls >> name >> n;
    std::string src;
    for (size_t i = 0; i < n && std::getline(in, line); i++) src += line + "\n";
    want[cur].push_back({name, src});
  }
  ASSERT_EQ(want.size(), 2u);
  std::vector<float> host(1024);
  for (int i = 0; i < 1024; i++) host[i] = (float)(i % 7);
  Tensor x = Tensor::from_vector(host).to(Arg("CL")).realize();
  // (a schedule's buffers are not computed: the values come from the same programs built again)
  auto make = [&] {
    return std::map<std::string, Tensor>{{"sum1024", x.sum()}, {"sum64x16", x.reshape({64, 16}).sum(0)}};
  };
  int barriers = 0;
  for (auto& [name, t] : make()) {
    SCOPED_TRACE(name);
    std::vector<std::pair<std::string, std::string>> got;
    UOp linear = Tensor::schedule_linear({t});
    for (const UOp& call : linear.src()) {
      if (call.src(0).op() != Ops::SINK) continue;
      UOp prg = to_program(call.src(0), get_device("CL").renderer());
      std::string src;
      for (const UOp& s : prg.src())
        if (s.op() == Ops::SOURCE) src = s.arg().as_str();
      if (!src.empty() && src.back() != '\n') src += "\n";
      got.push_back({prg.arg().as<ProgramInfo>()->function_name(), src});
      barriers += src.find("barrier(CLK_LOCAL_MEM_FENCE);") != std::string::npos;
    }
    ASSERT_EQ(got.size(), want[name].size());
    for (size_t i = 0; i < got.size(); i++) {
      EXPECT_EQ(got[i].first, want[name][i].first);
      EXPECT_EQ(got[i].second, want[name][i].second);
    }
  }
  EXPECT_EQ(barriers, 2);
  auto cases = make();
  EXPECT_EQ(cases.at("sum1024").item<float>(), 3067.0f);  // 146 full cycles of 0..6 (21 each), then 0 and 1
  std::vector<float> cols = cases.at("sum64x16").to_vector<float>();
  for (int j = 0; j < 16; j++) {
    float s = 0;
    for (int i = 0; i < 64; i++) s += host[i * 16 + j];
    EXPECT_EQ(cols[j], s) << j;
  }
}
