// The CPU device (target tg_backend_cpu), a port of tinygrad/runtime/ops_cpu.py with the LLVM path of DEV=CPU:LLVM:
// the CPULLVMRenderer's IR is compiled in process by LLVM 16 (backends/cpu/llvm.h) and loaded with ORC. Programs are
// called like the reference's CPUProgram: one uint64 per argument (buffer addresses, then Variable values), and a
// kernel with a core_id (a THREAD axis) is run once per core_id in 0 .. global_size[0] - 1; unlike the reference
// (which loops sequentially) those runs are spread over a thread pool.
//
//   tg::cpu::register_device();   // Device "CPU" in the registry of lib/device.h
//   tg::cpu::CPUDevice& dev = tg::cpu::CPUDevice::get();
//   void* out = dev.allocator().alloc(64);
//   auto prg = dev.compile(llvm_ir, "E_16");
//   (*prg)({out, a, b});
#pragma once
#include <memory>
#include <mutex>

#include "backends/cpu/llvm.h"
#include "backends/cpu/thread_pool.h"
#include "lib/device.h"

namespace tg::cpu {

// host memory: anonymous shared mmaps (page aligned, zeroed), like the reference's CPUAllocator
class CPUAllocator : public Allocator {
 public:
  CPUAllocator() : Allocator("CPU") {}
  void copyin(void* dest, std::span<const uint8_t> src) override;
  void copyout(std::span<uint8_t> dest, void* src) override;
  void* offset(void* buf, size_t size, size_t offset) override;

 protected:
  void* alloc_impl(size_t size, const BufferSpec& options) override;
  void free_impl(void* opaque, size_t size, const BufferSpec& options) override;
};

// the thread pool a device runs THREAD chunks on; replaceable while programs run
class ThreadPoolRef {
 public:
  explicit ThreadPoolRef(int n) : pool_(std::make_shared<ThreadPool>(n)) {}
  std::shared_ptr<ThreadPool> get() const {
    std::lock_guard<std::mutex> lk(mu_);
    return pool_;
  }
  void reset(int n) {
    auto p = std::make_shared<ThreadPool>(n);
    std::lock_guard<std::mutex> lk(mu_);
    pool_ = std::move(p);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<ThreadPool> pool_;
};

class CPUProgram : public Program {
 public:
  // loads the object `lib` (an LLVMCompiler result) and finds kernel `name` in it; throws DeviceError
  CPUProgram(std::shared_ptr<LLVMJit> jit, std::shared_ptr<ThreadPoolRef> pool, const std::string& name,
             std::span<const uint8_t> lib);
  using Program::operator();
  std::optional<double> operator()(std::span<void* const> bufs, std::span<const std::optional<pyint>> vals,
                                   const LaunchArgs& args) override;
  const std::vector<ParamSig>& signature() const { return sig_; }

 private:
  std::shared_ptr<LLVMJit> jit_;
  std::shared_ptr<ThreadPoolRef> pool_;
  std::unique_ptr<LLVMJit::Library> lib_;
  LLVMJit::Library::Entry entry_ = nullptr;
  std::vector<ParamSig> sig_;
};

class CPUDevice : public Compiled {
 public:
  // n_threads: the pool for THREAD chunks (0: NUM_CPU_THREADS)
  explicit CPUDevice(const std::string& device = "CPU", int n_threads = 0);
  ~CPUDevice() override;
  // Device("CPU") from the registry (registers it first if needed)
  static CPUDevice& get();

  Allocator& allocator() override { return allocator_; }
  LLVMCompiler& compiler() override { return *compiler_; }
  const Renderer& renderer() override;
  std::unique_ptr<Program> runtime(const std::string& name, std::span<const uint8_t> lib) override;

  int threads() const;
  void set_threads(int n);  // 0: NUM_CPU_THREADS

 private:
  CPUAllocator allocator_;
  std::unique_ptr<LLVMCompiler> compiler_;
  std::shared_ptr<LLVMJit> jit_;
  std::shared_ptr<ThreadPoolRef> pool_;
  std::unique_ptr<Renderer> renderer_;
};

// registers "CPU" with lib/device.h's registry (idempotent); also done by CPUDevice::get()
void register_device();

}  // namespace tg::cpu
