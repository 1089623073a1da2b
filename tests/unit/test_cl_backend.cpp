// The CL backend (backends/cl) on the machine's OpenCL platform (PoCL, installed by scripts/install-deps.sh): buffers,
// copies, the LRU cache, launches with local sizes, device timing, mixed CPU/CL graphs, TinyJit and BEAM on CL, and
// every failure a user can cause as one DeviceError or CompileError that names what failed, after which the process
// goes on.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "backends/cl/cl.h"
#include "backends/cpu/cpu.h"
#include "backends/interp/interp.h"
#include "lib/device.h"
#include "lib/engine/jit.h"
#include "lib/helpers.h"
#include "lib/renderer/renderer.h"
#include "lib/tensor.h"

using namespace tg;

namespace {

Compiled& cl_device() {
  cl::register_device();
  cpu::register_device();
  interp::register_device();
  return get_device("CL");
}

const char* kAdd =
    "__kernel void add_n(__global float* out, __global float* a, const int n) {\n"
    "  int i = get_global_id(0);\n"
    "  out[i] = a[i] + (float)n;\n"
    "}";

std::string run(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int rc = pclose(p);
  return out + "\n[rc " + std::to_string(WEXITSTATUS(rc)) + "]";
}

}  // namespace

TEST(CLBackend, ListsTheMachinesDevice) {
  cl_device();
  std::vector<std::string> devs = cl::list_devices();
  ASSERT_FALSE(devs.empty()) << "no OpenCL device: install pocl-opencl-icd (scripts/install-deps.sh)";
  EXPECT_NE(get_device("CL").renderer().target.arch.find("cl_khr"), std::string::npos)
      << "the renderer's arch lists the device's extensions";
}

TEST(CLBackend, CopiesRoundTripAndTheLRUKeepsFreedBuffers) {
  Compiled& dev = cl_device();
  auto& lru = dynamic_cast<LRUAllocator&>(dev.allocator());
  std::vector<uint8_t> in(1000), out(1000);
  for (size_t i = 0; i < in.size(); i++) in[i] = (uint8_t)(i * 7);
  void* b = dev.allocator().alloc(in.size());
  dev.allocator().copyin(b, in);
  dev.allocator().copyout(out, b);
  EXPECT_EQ(in, out);
  size_t cached = lru.cached_buffers();
  dev.allocator().free(b, in.size());
  EXPECT_EQ(lru.cached_buffers(), cached + 1);
  void* again = dev.allocator().alloc(in.size());  // the same size: the cached buffer comes back
  EXPECT_EQ(again, b);
  EXPECT_EQ(lru.cached_buffers(), cached);
  dev.allocator().free(again, in.size());
  lru.free_cache();
  EXPECT_EQ(lru.cached_buffers(), 0u);
}

TEST(CLBackend, LaunchesWithLocalSizesAndTimesOnTheDevice) {
  Compiled& dev = cl_device();
  std::shared_ptr<Program> prg = dev.compile(kAdd, "add_n");
  std::vector<float> a(64);
  for (size_t i = 0; i < a.size(); i++) a[i] = (float)i;
  void* ba = dev.allocator().alloc(256);
  void* bo = dev.allocator().alloc(256);
  dev.allocator().copyin(ba, std::span(reinterpret_cast<const uint8_t*>(a.data()), 256));
  int64_t before = now_ns();
  std::optional<double> t = prg->run(std::vector<void*>{bo, ba}, std::vector<std::optional<pyint>>{5}, {16, 1, 1},
                                     std::array<int64_t, 3>{4, 1, 1}, true);
  int64_t after = now_ns();
  ASSERT_TRUE(t.has_value());
  EXPECT_GT(*t, 0.0);
  auto range = prg->last_device_range();
  ASSERT_TRUE(range.has_value()) << "a CL kernel that waited has a device-clock range";
  EXPECT_LE(range->first, range->second);
  // the device clock, tied to the host's when the device opened, puts the run inside the host's wait (1 ms of slack)
  EXPECT_GE(range->first, before - 1000000);
  EXPECT_LE(range->second, after + 1000000);
  std::vector<float> o(64);
  dev.allocator().copyout(std::span(reinterpret_cast<uint8_t*>(o.data()), 256), bo);
  for (size_t i = 0; i < o.size(); i++) EXPECT_EQ(o[i], (float)i + 5) << i;
  dev.allocator().free(ba, 256);
  dev.allocator().free(bo, 256);
}

TEST(CLBackend, ABuildFailureNamesTheKernelAndCarriesTheBuildLog) {
  Compiled& dev = cl_device();
  const std::string bad = "__kernel void broken_k(__global float* out) {\n  out[0] = undeclared_thing;\n}";
  try {
    dev.compiler().compile(bad);
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("OpenCL Compile Error"), std::string::npos) << m;
    EXPECT_NE(m.find("broken_k"), std::string::npos) << m;
    EXPECT_NE(m.find("undeclared_thing"), std::string::npos) << "the build log: " << m;
  }
  // the device still works
  EXPECT_NO_THROW(dev.compile(kAdd, "add_n"));
}

TEST(CLBackend, LaunchFailuresAreDeviceErrors) {
  Compiled& dev = cl_device();
  std::shared_ptr<Program> prg = dev.compile(kAdd, "add_n");
  void* b = dev.allocator().alloc(64);
  try {
    (*prg)({b}, {});
    FAIL() << "expected a DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("add_n takes 3 arguments, got 1 buffers and 0 values"), std::string::npos)
        << e.what();
  }
  try {
    // a work-group far larger than any device allows
    prg->run(std::vector<void*>{b, b}, std::vector<std::optional<pyint>>{1}, {1, 1, 1},
             std::array<int64_t, 3>{1 << 20, 1, 1}, true);
    FAIL() << "expected a DeviceError";
  } catch (const DeviceError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("kernel add_n on CL: launch with global [1048576, 1, 1], local [1048576, 1, 1] failed: OpenCL "
                     "Error"),
              std::string::npos)
        << m;
  }
  // the queue goes on
  EXPECT_NO_THROW(prg->run(std::vector<void*>{b, b}, std::vector<std::optional<pyint>>{1}, {16, 1, 1},
                           std::array<int64_t, 3>{1, 1, 1}, true));
  dev.allocator().free(b, 64);
}

TEST(CLBackend, ADeviceThatIsNotThereSaysWhatExists) {
  cl_device();
  try {
    get_device("CL:7");
    FAIL() << "expected a DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("CL: no device 7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("device(s), CL:0 to CL:"), std::string::npos) << e.what();
  }
}

// no platform, no loader: one line that says what to install, exit code 1, no crash
TEST(CLBackend, NoOpenCLDeviceIsOneClearError) {
  std::string out = run(std::string("DEV=CL OCL_ICD_VENDORS=/nonexistent ") + TG_HELLO_BIN);
  EXPECT_NE(out.find("hello_tensor: no OpenCL device: install pocl-opencl-icd or a GPU driver"), std::string::npos)
      << out;
  EXPECT_NE(out.find("[rc 1]"), std::string::npos) << out;
  out = run(std::string("DEV=CL TG_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1 ") + TG_HELLO_BIN);
  EXPECT_NE(out.find("no OpenCL device: install pocl-opencl-icd or a GPU driver (the OpenCL ICD loader "
                     "/nonexistent/libOpenCL.so.1 does not load"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("[rc 1]"), std::string::npos) << out;
}

// What the device gives for a program, for the trace: PoCL's program binary holds the kernel's work-group function
// as an x86-64 shared object, which the CPU device's LLVM disassembles; another platform's binary is named (or, when
// it is text, kept as it is)
TEST(CLBackend, MachineCodeIsWhatTheDeviceGives) {
  Compiled& dev = cl_device();
  std::vector<uint8_t> lib = dev.compiler().compile(kAdd);
  std::optional<MachineCode> mc = dev.compiler().machine_code(lib);
  ASSERT_TRUE(mc);
  ASSERT_FALSE(mc->kind.empty());
  if (mc->kind.find("PoCL") == std::string::npos) {
    EXPECT_TRUE(!mc->text.empty() || mc->kind.find("no readable machine code") != std::string::npos) << mc->kind;
    return;
  }
#if defined(__x86_64__)
  EXPECT_NE(mc->kind.find("x86-64 machine code"), std::string::npos) << mc->kind;
  EXPECT_NE(mc->kind.find("add_n.so"), std::string::npos) << mc->kind;
  EXPECT_NE(mc->text.find("_pocl_kernel_add_n"), std::string::npos) << mc->text;
  EXPECT_NE(mc->text.find("retq"), std::string::npos) << mc->text;
#endif
  // a damaged binary is named, not read
  std::vector<uint8_t> bad(lib.begin(), lib.begin() + (long)(lib.size() - (lib.size() - 64) / 2));
  std::optional<MachineCode> part = dev.compiler().machine_code(bad);
  ASSERT_TRUE(part);
}

// Tensor.to("CL") and back, a graph that mixes CPU and CL with the copies the scheduler inserts
TEST(CLBackend, MixedCPUAndCLGraphs) {
  cl_device();
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4}).to("CPU");
  Tensor b = (a * 2).to("CL");
  Tensor c = (b + 1).to("CPU") * a;  // (2a + 1) * a, half on CL
  EXPECT_EQ(b.device().str(), "CL");
  EXPECT_EQ(c.device().str(), "CPU");
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{3, 10, 21, 36}));
  EXPECT_EQ((b.sum()).item<float>(), 20.f);
}

TEST(CLBackend, TinyJitOnCL) {
  cl_device();
  TinyJit jit([](const std::vector<Tensor>& in) { return std::vector<Tensor>{(in[0] * in[1] + 1).realize()}; });
  for (int i = 0; i < 4; i++) {
    Tensor x = Tensor::from_vector<float>({1, 2, 3}).to("CL").realize();
    Tensor y = Tensor::full({3}, (double)i).to("CL").realize();
    std::vector<Tensor> out = jit({x, y});
    EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{1.f + i, 1.f + 2 * i, 1.f + 3 * i})) << "call " << i;
  }
}

TEST(CLBackend, BeamOnCL) {
  cl_device();
  Context c({{"BEAM", 2}});
  Tensor a = Tensor::arange(64).reshape({8, 8}).cast(dtypes::float32).to("CL");
  Tensor s = a.matmul(a).sum();
  // sum over i,j of (A@A)[i][j] with A[i][k] = 8i + k
  double want = 0;
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++)
      for (int k = 0; k < 8; k++) want += (8.0 * i + k) * (8.0 * k + j);
  EXPECT_EQ(s.item<float>(), (float)want);
}
