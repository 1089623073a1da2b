// The CPU backend against the reference, kernel by kernel (tests/data/kernel_goldens.txt): every kernel's LLVM IR,
// both the reference's text and the one our linearizer and CPULLVMRenderer produce from the golden SINK, compiled by
// LLVM 16 and run by the CPU device on the inputs the reference's compiled kernel saw, must give its outputs (ints
// exactly, floats within the interpreter tests' tolerance) and agree with the interpreter on the same program.
#include <gtest/gtest.h>

#include <map>

#include "backends/cpu/cpu.h"
#include "lib/codegen/late/program.h"
#include "lib/renderer/llvmir.h"
#include "lib/uop/serialize.h"
#include "tests/support/cpu_helpers.h"

using namespace tg;
using namespace tg::cpu_test;

namespace {

using tg::test::dec_linear;

const std::vector<KernelGolden>& goldens() {
  static const std::vector<KernelGolden> g = load_kernel_goldens(TG_TEST_DATA "/kernel_goldens.txt");
  return g;
}


// Kernels the reference's own CPU:LLVM compile refuses: CPULLVMRenderer spells TRUNC as a call of the undeclared
// `@llvm.trunc.float` (`DEV=CPU:LLVM python3 -c "from tinygrad import Tensor; Tensor([1.5]).trunc().tolist()"` raises
// "use of undefined value '@llvm.trunc.float'"). Ours compiles them (the compiler declares the mangled intrinsic)
// and must give the reference's values (its golden outputs come from the PYTHON device).
const std::map<std::string, std::string> kReferenceRefuses = {};

struct Tally {
  const char* what;
  int total = 0, ok = 0;
  ~Tally() { std::printf("[ kernels ] %-40s %d/%d\n", what, ok, total); }
};

// run one source of kernel k on the CPU device and check it against the reference's outputs and the interpreter
void check_kernel(const KernelGolden& k, const std::string& src, Tally& t, Tally& exact, Tally& vs_interp) {
  cpu::CPUDevice& dev = cpu::CPUDevice::get();
  t.total++;
  if (auto it = kReferenceRefuses.find(k.program); it != kReferenceRefuses.end()) {
    try {
      dev.compile(src, k.name);
      ADD_FAILURE() << "the reference refuses this kernel, we compiled it";
    } catch (const CompileError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("kernel " + k.name + ": LLVM IR does not parse"), std::string::npos) << msg;
      EXPECT_NE(msg.find(it->second), std::string::npos) << msg;
      t.ok++;
    }
    return;
  }
  std::shared_ptr<Program> prg = dev.compile(src, k.name);
  auto got = run_on_device(*prg, k.bufs, k.vals, k.llvm.global);
  auto ref_interp = run_interp(dec_linear(k.llvm.program), k.bufs, k.vals, k.llvm.global);
  bool ok = true, ex = true, iok = true;
  for (size_t i = 0; i < k.bufs.size(); i++) {
    DType dt = dtypes::by_name(k.bufs[i].dtype);
    std::string err = compare_buffer(dt, k.bufs[i].after, got[i]);
    if (!err.empty()) {
      ok = false;
      ADD_FAILURE() << "buffer " << i << " (" << k.bufs[i].dtype << ") vs the reference: " << err;
    }
    ex = ex && got[i] == k.bufs[i].after;
    std::string ierr = compare_buffer(dt, ref_interp[i], got[i]);
    if (!ierr.empty()) {
      iok = false;
      ADD_FAILURE() << "buffer " << i << " (" << k.bufs[i].dtype << ") vs the interpreter: " << ierr;
    }
  }
  t.ok += ok;
  exact.total++;
  exact.ok += ex;
  if (ok && !ex) std::printf("[ within tolerance, not bit-exact ] %s (%s)\n", k.name.c_str(), k.program.c_str());
  vs_interp.total++;
  vs_interp.ok += iok;
}

}  // namespace

TEST(CPUGoldens, ReferenceIR) {
  Tally t{"reference IR ~ reference outputs"}, ex{"reference IR == reference outputs (bits)"},
      vi{"reference IR ~ interpreter"};
  for (const auto& k : goldens()) {
    if (!k.has_run) continue;
    SCOPED_TRACE("kernel " + std::to_string(k.id) + " " + k.name + " (" + k.program + ")");
    try {
      check_kernel(k, join_lines(k.llvm.source), t, ex, vi);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_EQ(t.total, (int)goldens().size());
  EXPECT_EQ(t.ok, t.total);
  EXPECT_GE(t.total, 70);
}

TEST(CPUGoldens, OurRenderedIR) {
  Tally t{"our IR (sink->linearize->render) ~ ref"}, ex{"our IR == reference outputs (bits)"},
      vi{"our IR ~ interpreter"};
  CPULLVMRenderer ren(Target{"CPU", "LLVM", "x86_64,native", "", ""});
  for (const auto& k : goldens()) {
    if (!k.has_run) continue;
    SCOPED_TRACE("kernel " + std::to_string(k.id) + " " + k.name + " (" + k.program + ")");
    try {
      std::string src = do_render(ren, decode_graph(k.llvm.sink));
      check_kernel(k, src, t, ex, vi);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GE(t.total, 70);
}

// the PROGRAM path a realize engine takes: ProgramInfo gives the launch dims and the variable values (core_id left to
// the launcher), the device's renderer renders, the device compiles and runs
TEST(CPUGoldens, ThroughProgramInfo) {
  Tally t{"PROGRAM + ProgramInfo -> CPU ~ ref"};
  cpu::CPUDevice& dev = cpu::CPUDevice::get();
  for (const auto& k : goldens()) {
    if (!k.has_run) continue;
    SCOPED_TRACE("kernel " + std::to_string(k.id) + " " + k.name + " (" + k.program + ")");
    if (kReferenceRefuses.count(k.program)) continue;
    t.total++;
    try {
      UOp prg = to_program_from_full_sink(decode_graph(k.llvm.sink), dev.renderer());
      const ProgramInfo* info = prg.arg().as<ProgramInfo>();
      ASSERT_NE(info, nullptr);
      std::unordered_map<std::string, pyint> var_vals;
      for (size_t i = 0; i < info->vars.size(); i++)
        if (k.vals[i] != "-") var_vals[info->vars[i].expr()] = std::stoll(k.vals[i]);
      auto [global, local] = info->launch_dims(var_vals);
      std::vector<std::string> vals;
      for (const auto& v : info->vals(var_vals)) vals.push_back(v ? pyint_str(*v) : "-");
      EXPECT_EQ(vals, k.vals);
      std::array<int64_t, 3> g{(int64_t)global[0], (int64_t)global[1], (int64_t)global[2]};
      auto p = dev.compile(prg.src(2).arg().as_str(), info->function_name());
      auto got = run_on_device(*p, k.bufs, vals, g);
      bool ok = true;
      for (size_t i = 0; i < k.bufs.size(); i++) {
        std::string err = compare_buffer(dtypes::by_name(k.bufs[i].dtype), k.bufs[i].after, got[i]);
        if (!err.empty()) {
          ok = false;
          ADD_FAILURE() << "buffer " << i << ": " << err;
        }
      }
      t.ok += ok;
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  }
}
