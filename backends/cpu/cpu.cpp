#include "backends/cpu/cpu.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "lib/renderer/llvmir.h"

namespace tg::cpu {

// ***** CPUAllocator *****

void* CPUAllocator::alloc_impl(size_t size, const BufferSpec& options) {
  if (options.external_ptr) return reinterpret_cast<void*>(*options.external_ptr);
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_SHARED, -1, 0);
  if (p == MAP_FAILED) throw DeviceError(std::string("mmap: ") + std::strerror(errno));
  return p;
}

void CPUAllocator::free_impl(void* opaque, size_t size, const BufferSpec& options) {
  if (!options.external_ptr) munmap(opaque, size);
}

void CPUAllocator::copyin(void* dest, std::span<const uint8_t> src) {
  if (!src.empty()) std::memcpy(dest, src.data(), src.size());
}

void CPUAllocator::copyout(std::span<uint8_t> dest, void* src) {
  if (!dest.empty()) std::memcpy(dest.data(), src, dest.size());
}

void* CPUAllocator::offset(void* buf, size_t, size_t offset) { return static_cast<uint8_t*>(buf) + offset; }

// ***** CPUProgram *****

CPUProgram::CPUProgram(std::shared_ptr<LLVMJit> jit, std::shared_ptr<ThreadPoolRef> pool, const std::string& name,
                       std::span<const uint8_t> lib)
    : Program(name), jit_(std::move(jit)), pool_(std::move(pool)) {
  lib_ = jit_->load(lib);
  entry_ = lib_->entry(name, &sig_);
}

std::optional<double> CPUProgram::operator()(std::span<void* const> bufs, std::span<const std::optional<pyint>> vals,
                                             const LaunchArgs& la) {
  auto st = std::chrono::steady_clock::now();
  const size_t nargs = bufs.size() + vals.size();
  if (nargs != sig_.size())
    throw DeviceError("kernel " + name + " takes " + std::to_string(sig_.size()) + " arguments, got " +
                      std::to_string(bufs.size()) + " buffers and " + std::to_string(vals.size()) + " values");
  // args = [*bufs, *vals]; the nullopt values are the runtime variable core_id, filled per call
  std::vector<uint64_t> args(nargs);
  std::vector<size_t> core_slots;
  for (size_t i = 0; i < bufs.size(); i++) {
    if (sig_[i].kind != ParamKind::PTR)
      throw DeviceError("kernel " + name + ": argument " + std::to_string(i) + " is a value, got a buffer");
    uint64_t a = reinterpret_cast<uintptr_t>(bufs[i]);
    // the IR promises `align N` on its buffers: a misaligned address would fault in an aligned vector load
    if (sig_[i].align > 1 && a % sig_[i].align != 0)
      throw DeviceError("kernel " + name + ": buffer " + std::to_string(i) + " is not " +
                        std::to_string(sig_[i].align) + "-byte aligned");
    args[i] = a;
  }
  for (size_t j = 0; j < vals.size(); j++) {
    size_t i = bufs.size() + j;
    if (sig_[i].kind == ParamKind::PTR)
      throw DeviceError("kernel " + name + ": argument " + std::to_string(i) + " is a buffer, got a value");
    if (vals[j])
      args[i] = (uint64_t)*vals[j];  // python int -> ctypes.c_uint64: two's complement
    else
      core_slots.push_back(i);
  }
  const int64_t n = la.global_size[0];
  if (core_slots.empty()) {
    // the reference calls the kernel global_size[0] times either way
    for (int64_t tid = 0; tid < n; tid++) entry_(args.data());
  } else {
    std::shared_ptr<ThreadPool> pool = pool_->get();
    auto run = [&](int64_t tid) {
      std::vector<uint64_t> a(args);
      for (size_t s : core_slots) a[s] = (uint64_t)tid;
      entry_(a.data());
    };
    pool->parallel_for(n, run);
  }
  if (!la.wait) return std::nullopt;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - st).count();
}

// ***** CPUDevice *****

namespace {
int default_threads() { return (int)std::max<int64_t>(1, NUM_CPU_THREADS.value()); }

// the renderer DEV names for the CPU (DEV=CPU:LLVM), like the reference's Device._select_renderer: CLANG, its first
// renderer and the default, or LLVM. Both render LLVM IR compiled in-process; CLANG computes what the reference's C
// source compiled by clang computes (its ops and clang's floating-point contraction), LLVM what its LLVM IR computes
std::unique_ptr<CPULLVMRenderer> cpu_renderer() {
  std::string dev = getenv_str("DEV", ""), name;
  size_t c = dev.find(':');
  std::string part = c == std::string::npos ? dev : dev.substr(0, c);
  for (char& ch : part) ch = (char)std::toupper((unsigned char)ch);
  if (part == "CPU" && c != std::string::npos) {
    name = dev.substr(c + 1);
    name = name.substr(0, name.find(':'));
    for (char& ch : name) ch = (char)std::toupper((unsigned char)ch);
  }
  if (name.empty() || std::all_of(name.begin(), name.end(), ::isdigit)) name = "CLANG";
  if (name != "CLANG" && name != "LLVM")
    throw DeviceError("CPU has no renderer '" + name + "' (DEV=" + dev + "): use DEV=CPU (CLANG) or DEV=CPU:LLVM");
  return std::make_unique<CPULLVMRenderer>(Target{"CPU", name, "x86_64,native", "", ""}, name == "CLANG");
}
}  // namespace

CPUDevice::CPUDevice(const std::string& device, int n_threads)
    : Compiled(device),
      compiler_(std::make_unique<LLVMCompiler>(getenv_int("LLVMOPT", 1) != 0)),
      jit_(LLVMJit::create()),
      pool_(std::make_shared<ThreadPoolRef>(n_threads > 0 ? n_threads : default_threads())),
      renderer_(cpu_renderer()) {}

CPUDevice::~CPUDevice() = default;

const Renderer& CPUDevice::renderer() { return *renderer_; }

std::unique_ptr<Program> CPUDevice::runtime(const std::string& name, std::span<const uint8_t> lib) {
  return std::make_unique<CPUProgram>(jit_, pool_, name, lib);
}

int CPUDevice::threads() const { return pool_->get()->size(); }
void CPUDevice::set_threads(int n) { pool_->reset(n > 0 ? n : default_threads()); }

void register_device() {
  static std::once_flag once;
  std::call_once(once, [] {
    tg::register_device("CPU", [](const std::string& dev) { return std::make_unique<CPUDevice>(dev); });
  });
}

CPUDevice& CPUDevice::get() {
  register_device();
  return dynamic_cast<CPUDevice&>(get_device("CPU"));
}

}  // namespace tg::cpu
