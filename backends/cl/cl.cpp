#include "backends/cl/cl.h"

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "lib/device.h"
#include "lib/renderer/cstyle.h"
#include "profiler/profile.h"

namespace tg::cl {

namespace {

// ***** errors *****

const char* error_name(cl_int e) {
  switch (e) {
#define E(x) \
  case x:    \
    return #x;
    E(CL_DEVICE_NOT_FOUND)
    E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE) E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES)
        E(CL_OUT_OF_HOST_MEMORY) E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_IMAGE_FORMAT_MISMATCH)
            E(CL_IMAGE_FORMAT_NOT_SUPPORTED) E(CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE)
                E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
                    E(CL_COMPILE_PROGRAM_FAILURE) E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE)
                        E(CL_DEVICE_PARTITION_FAILED) E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(CL_INVALID_VALUE) E(
                            CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
                            E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
                                E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) E(CL_INVALID_IMAGE_SIZE)
                                    E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS)
                                        E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
                                            E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
                                                E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
                                                    E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE)
                                                        E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET)
                                                            E(CL_INVALID_EVENT_WAIT_LIST) E(CL_INVALID_EVENT) E(
                                                                CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT)
                                                                E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_MIP_LEVEL) E(
                                                                    CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
                                                                    E(CL_INVALID_IMAGE_DESCRIPTOR)
                                                                        E(CL_INVALID_COMPILER_OPTIONS)
                                                                            E(CL_INVALID_LINKER_OPTIONS)
                                                                                E(CL_INVALID_DEVICE_PARTITION_COUNT)
                                                                                    E(CL_PLATFORM_NOT_FOUND_KHR)
#undef E
                                                                                        default
        : return "Unknown error";
  }
}

// "OpenCL Error -5: CL_OUT_OF_RESOURCES", as the reference's check() words it
std::string error_str(cl_int e) { return "OpenCL Error " + std::to_string(e) + ": " + error_name(e); }

void check(cl_int status, const std::string& what) {
  if (status != CL_SUCCESS) throw DeviceError(what + ": " + error_str(status));
}

constexpr const char* kNoDevice = "no OpenCL device: install pocl-opencl-icd or a GPU driver";

// ***** the ICD loader, in a link-map namespace of its own *****
// The CPU backend links LLVM 16, which is then in the process's global symbol scope. A platform library with its own
// LLVM (PoCL: clang and LLVM 15; Mesa's rusticl and ROCm ship theirs) defines LLVM's template instantiations (pass
// models, vtables) without a symbol version, and the dynamic linker binds those to LLVM 16's copies first: its
// compiler then runs LLVM 16 code on LLVM 15 objects and crashes. RTLD_DEEPBIND does not help (it splits malloc and
// free between jemalloc and libc). So the ICD loader (libOpenCL.so.1) and every platform it loads live in a new
// namespace (dlmopen) with their own copies of libc and libstdc++, and the OpenCL functions below are looked up
// there; they shadow the global declarations of <CL/cl.h> inside this namespace. Nothing allocated on one side is
// freed on the other: every call passes plain memory and handles.
//
// glibc's second libc starts the threads it creates itself; on a thread started by ours, its ctype tables (which
// isspace and friends read through thread-local pointers) are not set up until its __ctype_init runs on that thread
void (*ctype_init)() = nullptr;
void enter_namespace() {
  thread_local bool ready = false;
  if (!ready && ctype_init) ctype_init(), ready = true;
}
template <typename F>
struct Fn;
template <typename R, typename... A>
struct Fn<R (*)(A...)> {
  R (*p)(A...) = nullptr;
  R operator()(A... a) const {
    enter_namespace();
    return p(a...);
  }
};
// the OpenCL functions this backend calls
#define TG_CL_FUNCTIONS(X)                                                                                           \
  X(clBuildProgram)                                                                                                  \
  X(clCreateBuffer) X(clCreateCommandQueue) X(clCreateContext) X(clCreateKernel) X(clCreateProgramWithBinary)        \
      X(clCreateProgramWithSource) X(clEnqueueNDRangeKernel) X(clEnqueueReadBuffer) X(clEnqueueWriteBuffer)          \
          X(clFinish) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clGetEventProfilingInfo) X(clGetPlatformIDs)            \
              X(clGetPlatformInfo) X(clGetProgramBuildInfo) X(clGetProgramInfo) X(clReleaseCommandQueue)             \
                  X(clReleaseContext) X(clReleaseEvent) X(clReleaseKernel) X(clReleaseMemObject) X(clReleaseProgram) \
                      X(clSetKernelArg) X(clWaitForEvents)
#define TG_CL_DECLARE(f) Fn<decltype(&::f)> f;
TG_CL_FUNCTIONS(TG_CL_DECLARE)
#undef TG_CL_DECLARE

// loads the ICD loader once; "" when it is there, else why not
const std::string& load_icd() {
  static const std::string error = [] {
    std::string lib = getenv_str("TG_OPENCL_LIBRARY", "libOpenCL.so.1");
    void* h = dlmopen(LM_ID_NEWLM, lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) return std::string(kNoDevice) + " (the OpenCL ICD loader " + lib + " does not load: " + dlerror() + ")";
    std::string missing;
    auto sym = [&](const char* name) {
      void* p = dlsym(h, name);
      if (!p) missing += std::string(missing.empty() ? "" : ", ") + name;
      return p;
    };
#define TG_CL_LOAD(f) f.p = reinterpret_cast<decltype(&::f)>(sym(#f));
    TG_CL_FUNCTIONS(TG_CL_LOAD)
#undef TG_CL_LOAD
    if (!missing.empty()) return "the OpenCL ICD loader " + lib + " lacks " + missing;
    Lmid_t lmid;
    if (dlinfo(h, RTLD_DI_LMID, &lmid) == 0)
      if (void* libc = dlmopen(lmid, "libc.so.6", RTLD_NOW | RTLD_NOLOAD))
        ctype_init = reinterpret_cast<void (*)()>(dlsym(libc, "__ctype_init"));
    return std::string();
  }();
  return error;
}

// ***** platforms and devices (the reference's CLDevice.device_ids, found once) *****

struct DeviceIds {
  std::vector<cl_device_id> ids;
  std::string platform, error;  // error: why there are none
};

const DeviceIds& device_ids() {
  static const DeviceIds d = [] {
    DeviceIds r;
    if (!load_icd().empty()) {
      r.error = load_icd();
      return r;
    }
    cl_uint nplat = 0;
    cl_int err = clGetPlatformIDs(0, nullptr, &nplat);
    if (err != CL_SUCCESS || nplat == 0) {
      r.error =
          std::string(kNoDevice) + " (clGetPlatformIDs: " + (err != CL_SUCCESS ? error_str(err) : "0 platforms") + ")";
      return r;
    }
    std::vector<cl_platform_id> plats(nplat);
    check(clGetPlatformIDs(nplat, plats.data(), nullptr), "clGetPlatformIDs");
    char buf[256] = {};
    clGetPlatformInfo(plats[0], CL_PLATFORM_NAME, sizeof(buf) - 1, buf, nullptr);
    r.platform = buf;
    cl_uint ndev = 0;
    cl_device_type type = CL_DEVICE_TYPE_GPU;
    for (cl_device_type t : {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_DEFAULT}) {
      type = t;
      if (clGetDeviceIDs(plats[0], t, 0, nullptr, &ndev) == CL_SUCCESS && ndev != 0) break;
    }
    if (ndev == 0) {
      r.error = std::string(kNoDevice) + " (platform '" + r.platform + "' has no device)";
      return r;
    }
    r.ids.resize(ndev);
    check(clGetDeviceIDs(plats[0], type, ndev, r.ids.data(), nullptr), "clGetDeviceIDs");
    if (DEBUG >= 1) std::printf("CLDevice: got %u platforms and %u devices\n", nplat, ndev);
    return r;
  }();
  return d;
}

std::string device_info_str(cl_device_id dev, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(dev, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  clGetDeviceInfo(dev, what, n, s.data(), nullptr);
  s.resize(std::strlen(s.c_str()));
  return s;
}

// ***** the compiled program format *****
// A library is a small header and the device binary: "TGCL1\n<kernel name>\n<argument kinds>\n<binary>", the kinds
// comma separated: p for a buffer, else the byte size of a value argument (the reference keeps the signature in its
// TinyELF). The kinds come from the kernel's parameter list in the source.

constexpr const char* kMagic = "TGCL1\n";

struct Signature {
  std::string name;
  std::vector<int> kinds;  // 0: buffer, else the value's byte size
};

int scalar_size(const std::string& type) {
  static const std::pair<const char*, int> sizes[] = {
      {"char", 1}, {"uchar", 1}, {"bool", 1}, {"short", 2}, {"ushort", 2}, {"half", 2},   {"int", 4},
      {"uint", 4}, {"float", 4}, {"long", 8}, {"ulong", 8}, {"double", 8}, {"size_t", 8},
  };
  for (const auto& [n, s] : sizes)
    if (type == n) return s;
  return 0;
}

// the kernel's name and parameters from its source: "__kernel void NAME(__global float* data0, const int n)"
Signature parse_signature(const std::string& src) {
  Signature sig;
  size_t k = src.find("__kernel void ");
  if (k == std::string::npos) throw CompileError("OpenCL Compile Error\n\nno '__kernel void' in the source");
  size_t open = src.find('(', k);
  size_t close = src.find(')', open);
  if (open == std::string::npos || close == std::string::npos)
    throw CompileError("OpenCL Compile Error\n\nthe kernel's parameter list is not closed");
  size_t name_start = k + std::strlen("__kernel void ");
  sig.name = src.substr(name_start, open - name_start);
  std::string params = src.substr(open + 1, close - open - 1);
  size_t p = 0;
  while (p < params.size()) {
    size_t e = params.find(',', p);
    if (e == std::string::npos) e = params.size();
    std::string a = params.substr(p, e - p);
    p = e + 1;
    if (a.find_first_not_of(" \t\n") == std::string::npos) continue;
    if (a.find('*') != std::string::npos || a.find("image2d_t") != std::string::npos) {
      sig.kinds.push_back(0);
      continue;
    }
    // "const int n": the last word is the name, the one before it the type
    std::vector<std::string> words;
    for (size_t i = 0; i < a.size();) {
      size_t s = a.find_first_not_of(" \t\n", i);
      if (s == std::string::npos) break;
      size_t t = a.find_first_of(" \t\n", s);
      if (t == std::string::npos) t = a.size();
      words.push_back(a.substr(s, t - s));
      i = t;
    }
    int sz = words.size() >= 2 ? scalar_size(words[words.size() - 2]) : 0;
    if (sz == 0)
      throw CompileError("OpenCL Compile Error\n\nkernel " + sig.name + ": unsupported parameter '" + a + "'");
    sig.kinds.push_back(sz);
  }
  return sig;
}

std::string encode_kinds(const std::vector<int>& kinds) {
  std::string r;
  for (size_t i = 0; i < kinds.size(); i++)
    r += (i ? "," : "") + (kinds[i] == 0 ? std::string("p") : std::to_string(kinds[i]));
  return r;
}

// splits a library into its signature and the binary
Signature decode_lib(std::span<const uint8_t> lib, std::span<const uint8_t>& binary) {
  std::string_view v(reinterpret_cast<const char*>(lib.data()), lib.size());
  if (v.substr(0, std::strlen(kMagic)) != kMagic) throw DeviceError("CL: the library is not a compiled CL program");
  size_t a = std::strlen(kMagic), b = v.find('\n', a), c = b == std::string_view::npos ? b : v.find('\n', b + 1);
  if (c == std::string_view::npos) throw DeviceError("CL: the compiled program's header is damaged");
  Signature sig;
  sig.name = std::string(v.substr(a, b - a));
  std::string kinds(v.substr(b + 1, c - b - 1));
  for (size_t p = 0; p < kinds.size();) {
    size_t e = kinds.find(',', p);
    if (e == std::string::npos) e = kinds.size();
    std::string k = kinds.substr(p, e - p);
    sig.kinds.push_back(k == "p" ? 0 : std::stoi(k));
    p = e + 1;
  }
  binary = lib.subspan(c + 1);
  return sig;
}

// ***** the device *****

class CLDevice;

class CLAllocator : public LRUAllocator {
 public:
  CLAllocator(const std::string& device, CLDevice& dev) : LRUAllocator(device), dev_(dev) {}
  ~CLAllocator() override { free_cache(); }
  void copyin(void* dest, std::span<const uint8_t> src) override;
  void copyout(std::span<uint8_t> dest, void* src) override;
  uint64_t max_buffer_bytes() const override;

 protected:
  void* lru_alloc(size_t size, const BufferSpec& options) override;
  void lru_free(void* opaque, size_t size, const BufferSpec& options) override;

 private:
  CLDevice& dev_;
};

class CLCompiler : public Compiler {
 public:
  CLCompiler(CLDevice& dev, std::string key) : Compiler(std::move(key)), dev_(dev) {}
  std::vector<uint8_t> compile(const std::string& src) override;
  std::optional<MachineCode> machine_code(std::span<const uint8_t> lib) const override;

 private:
  CLDevice& dev_;
};

class CLProgram : public Program {
 public:
  CLProgram(CLDevice& dev, const std::string& name, std::span<const uint8_t> lib);
  ~CLProgram() override;
  using Program::operator();
  std::optional<double> operator()(std::span<void* const> bufs, std::span<const std::optional<pyint>> vals,
                                   const LaunchArgs& args) override;
  std::optional<std::pair<int64_t, int64_t>> last_device_range() const override { return last_range_; }

 private:
  CLDevice& dev_;
  cl_program program_ = nullptr;
  cl_kernel kernel_ = nullptr;
  Signature sig_;
  std::optional<std::pair<int64_t, int64_t>> last_range_;
};

class CLDevice : public Compiled {
 public:
  explicit CLDevice(const std::string& device);
  ~CLDevice() override;
  Allocator& allocator() override { return *allocator_; }
  Compiler& compiler() override { return *compiler_; }
  const Renderer& renderer() override { return *renderer_; }
  std::unique_ptr<Program> runtime(const std::string& name, std::span<const uint8_t> lib) override {
    return std::make_unique<CLProgram>(*this, name, lib);
  }
  void synchronize() override { check(clFinish(queue), device + ": clFinish"); }

  cl_device_id cl_dev = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string device_name, driver_version;
  int64_t tdiff_ns = 0;  // host clock - device clock
  std::mutex queue_mu;   // one enqueue at a time: argument setting and launch of a kernel are not atomic

 private:
  void sync_clocks();
  std::unique_ptr<CLAllocator> allocator_;
  std::unique_ptr<CLCompiler> compiler_;
  std::unique_ptr<OpenCLRenderer> renderer_;
};

// ***** CLAllocator *****

void* CLAllocator::lru_alloc(size_t size, const BufferSpec&) {
  cl_int st = CL_SUCCESS;
  cl_mem m = clCreateBuffer(dev_.context, CL_MEM_READ_WRITE, size, nullptr, &st);
  check(st, "clCreateBuffer");
  return m;
}

void CLAllocator::lru_free(void* opaque, size_t, const BufferSpec&) { clReleaseMemObject(static_cast<cl_mem>(opaque)); }

void CLAllocator::copyin(void* dest, std::span<const uint8_t> src) {
  if (src.empty()) return;
  // blocking: the caller's bytes may be gone when this returns (the reference keeps them until synchronize)
  check(clEnqueueWriteBuffer(dev_.queue, static_cast<cl_mem>(dest), CL_TRUE, 0, src.size(), src.data(), 0, nullptr,
                             nullptr),
        device + ": copy in of " + std::to_string(src.size()) + " bytes");
}

void CLAllocator::copyout(std::span<uint8_t> dest, void* src) {
  if (dest.empty()) return;
  // the queue is in order: the read waits for every kernel enqueued before it
  check(clEnqueueReadBuffer(dev_.queue, static_cast<cl_mem>(src), CL_TRUE, 0, dest.size(), dest.data(), 0, nullptr,
                            nullptr),
        device + ": copy out of " + std::to_string(dest.size()) + " bytes");
}

uint64_t CLAllocator::max_buffer_bytes() const {
  cl_ulong n = 0;
  if (clGetDeviceInfo(dev_.cl_dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(n), &n, nullptr) != CL_SUCCESS || n == 0)
    return host_memory_bytes();
  return n;
}

// ***** CLCompiler *****

std::vector<uint8_t> CLCompiler::compile(const std::string& src) {
  Signature sig = parse_signature(src);
  const char* text = src.c_str();
  size_t len = src.size();
  cl_int st = CL_SUCCESS;
  cl_program prg = clCreateProgramWithSource(dev_.context, 1, &text, &len, &st);
  check(st, "clCreateProgramWithSource");
  struct Release {
    cl_program p;
    ~Release() { clReleaseProgram(p); }
  } release{prg};
  cl_int build = clBuildProgram(prg, 1, &dev_.cl_dev, nullptr, nullptr, nullptr);
  if (build != CL_SUCCESS) {
    size_t n = 0;
    clGetProgramBuildInfo(prg, dev_.cl_dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    if (n) clGetProgramBuildInfo(prg, dev_.cl_dev, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    log.resize(std::strlen(log.c_str()));
    throw CompileError("OpenCL Compile Error in kernel " + sig.name + " (" + error_str(build) + ")\n\n" + log);
  }
  size_t bin_size = 0;
  check(clGetProgramInfo(prg, CL_PROGRAM_BINARY_SIZES, sizeof(bin_size), &bin_size, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
  std::string header = std::string(kMagic) + sig.name + "\n" + encode_kinds(sig.kinds) + "\n";
  std::vector<uint8_t> out(header.begin(), header.end());
  out.resize(header.size() + bin_size);
  unsigned char* bin = out.data() + header.size();
  check(clGetProgramInfo(prg, CL_PROGRAM_BINARIES, sizeof(bin), &bin, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARIES)");
  return out;
}

// ***** the machine code of a program binary, for the trace *****

namespace {

std::string kb(size_t n) {
  char b[32];
  if (n < 10240)
    std::snprintf(b, sizeof b, "%zu bytes", n);
  else
    std::snprintf(b, sizeof b, "%.0f KB", n / 1024.0);
  return b;
}

uint32_t le32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// a program binary that is text (NVIDIA's PTX, some drivers' assembly): printable ASCII or UTF-8, NULs only at the end
bool is_text(std::span<const uint8_t> b) {
  size_t n = b.size();
  while (n && b[n - 1] == 0) n--;
  if (n == 0) return false;
  for (size_t i = 0; i < n; i++)
    if (b[i] < 0x20 && b[i] != '\n' && b[i] != '\t' && b[i] != '\r') return false;
  return true;
}

// one file of PoCL's program binary (its kernel cache, serialized): "/<kernel>/<local size>/<kernel>.so" and the like
struct PoclFile {
  std::string path;
  std::span<const uint8_t> bytes;
};

// The ELF objects PoCL 3's binary carries: after a header, the cache's files as (u32 path length, path, u32 size,
// bytes). Each ELF found is checked against that framing (the path before it ends in ".so", the size fits), so a
// binary of another layout yields nothing instead of garbage.
std::vector<PoclFile> pocl_objects(std::span<const uint8_t> bin) {
  std::vector<PoclFile> out;
  static const uint8_t elf[4] = {0x7f, 'E', 'L', 'F'};
  for (size_t i = 8; i + 4 <= bin.size(); i++) {
    if (std::memcmp(bin.data() + i, elf, 4) != 0) continue;
    uint32_t size = le32(bin.data() + i - 4);
    if (size < 64 || size > bin.size() - i) continue;
    // the path: "<u32 len><len bytes>" right before the size
    std::string path;
    for (size_t len = 3; len < 4096 && len + 8 <= i; len++) {
      size_t at = i - 4 - len;
      if (le32(bin.data() + at - 4) != len) continue;
      path.assign(reinterpret_cast<const char*>(bin.data() + at), len);
      break;
    }
    if (path.size() < 3 || path.compare(path.size() - 3, 3, ".so") != 0) continue;
    out.push_back({path, bin.subspan(i, size)});
    i += size - 1;
  }
  return out;
}

}  // namespace

// What the device gives for a program: a binary that is text is recorded as it is; PoCL's binary (its kernel cache:
// the program's LLVM bitcode and, for each kernel, a shared object with its work-group function compiled for any
// local size) has its objects disassembled by the CPU device's disassembler when that is there and the objects are
// for this host; anything else is named, with its size, and no machine code is recorded.
std::optional<MachineCode> CLCompiler::machine_code(std::span<const uint8_t> lib) const {
  std::span<const uint8_t> bin;
  decode_lib(lib, bin);
  const std::string dev = dev_.device_name.empty() ? std::string("the device") : dev_.device_name;
  if (is_text(bin)) {
    std::string text(reinterpret_cast<const char*>(bin.data()), bin.size());
    text.resize(std::strlen(text.c_str()));
    return MachineCode{"the program binary " + dev + " gives, which is text (" + kb(text.size()) + ")", text};
  }
  auto starts = [&](const char* m, size_t n) { return bin.size() >= n && std::memcmp(bin.data(), m, n) == 0; };
  if (starts("poclbin", 8)) {
    std::vector<PoclFile> objs = pocl_objects(bin);
    std::string names;
    for (const PoclFile& o : objs) names += (names.empty() ? "" : ", ") + o.path + " (" + kb(o.bytes.size()) + ")";
    // x86-64 objects (e_machine 62) on an x86-64 host: the CPU device's LLVM reads them
    bool host = false;
#if defined(__x86_64__)
    host = !objs.empty() && std::all_of(objs.begin(), objs.end(), [](const PoclFile& o) {
      return o.bytes.size() > 20 && o.bytes[4] == 2 && o.bytes[18] == 62 && o.bytes[19] == 0;
    });
#endif
    std::string why = host ? " (no CPU device to disassemble them)" : " for another machine";
    if (host && device_registered("CPU")) {
      std::string text, kinds;
      for (const PoclFile& o : objs) {
        std::optional<MachineCode> mc = get_device("CPU").compiler().machine_code(o.bytes);
        if (!mc || mc->text.empty()) {
          why = " (" + o.path + ": " + (mc ? mc->kind : std::string("the CPU device reads no objects")) + ")";
          text.clear();
          break;
        }
        text += (text.empty() ? "" : "\n") + std::string("; ") + o.path + "\n" + mc->text;
        if (kinds.empty()) kinds = mc->kind.substr(0, mc->kind.find(':'));
      }
      if (!text.empty())
        return MachineCode{kinds + ": LLVM's disassembly of " + names + " in " + dev +
                               "'s program binary (PoCL's work-group functions: the directory says the local size "
                               "each was built for, 0-0-0 any)",
                           text};
    }
    return MachineCode{"PoCL's program binary (" + kb(bin.size()) + "): LLVM bitcode" +
                           (objs.empty() ? std::string(", no compiled object") : ", and " + names + why),
                       ""};
  }
  std::string what = starts(
                         "\x7f"
                         "ELF",
                         4)
                         ? "an ELF object"
                     : starts("BC\xc0\xde", 4) || starts("\xde\xc0\x17\x0b", 4) ? "LLVM bitcode"
                                                                                : "a binary in a format not read here";
  return MachineCode{dev + " gives " + what + " (" + kb(bin.size()) + "), no readable machine code", ""};
}

// ***** CLProgram *****

CLProgram::CLProgram(CLDevice& dev, const std::string& name, std::span<const uint8_t> lib) : Program(name), dev_(dev) {
  std::span<const uint8_t> binary;
  sig_ = decode_lib(lib, binary);
  const unsigned char* b = binary.data();
  size_t n = binary.size();
  cl_int bin_status = CL_SUCCESS, st = CL_SUCCESS;
  program_ = clCreateProgramWithBinary(dev.context, 1, &dev.cl_dev, &n, &b, &bin_status, &st);
  check(st, "kernel " + name + ": clCreateProgramWithBinary");
  check(bin_status, "kernel " + name + ": the device refused the binary");
  check(clBuildProgram(program_, 1, &dev.cl_dev, nullptr, nullptr, nullptr), "kernel " + name + ": clBuildProgram");
  kernel_ = clCreateKernel(program_, name.c_str(), &st);
  check(st, "kernel " + name + ": clCreateKernel");
}

CLProgram::~CLProgram() {
  if (kernel_) clReleaseKernel(kernel_);
  if (program_) clReleaseProgram(program_);
}

std::optional<double> CLProgram::operator()(std::span<void* const> bufs, std::span<const std::optional<pyint>> vals,
                                            const LaunchArgs& la) {
  if (bufs.size() + vals.size() != sig_.kinds.size())
    throw DeviceError("kernel " + name + " takes " + std::to_string(sig_.kinds.size()) + " arguments, got " +
                      std::to_string(bufs.size()) + " buffers and " + std::to_string(vals.size()) + " values");
  std::lock_guard<std::mutex> lk(dev_.queue_mu);
  for (size_t i = 0; i < sig_.kinds.size(); i++) {
    int kind = sig_.kinds[i];
    cl_int st;
    if (i < bufs.size()) {
      if (kind != 0)
        throw DeviceError("kernel " + name + ": argument " + std::to_string(i) + " is a value, got a buffer");
      cl_mem m = static_cast<cl_mem>(bufs[i]);
      st = clSetKernelArg(kernel_, (cl_uint)i, sizeof(m), &m);
    } else {
      const std::optional<pyint>& v = vals[i - bufs.size()];
      if (kind == 0)
        throw DeviceError("kernel " + name + ": argument " + std::to_string(i) + " is a buffer, got a value");
      if (!v) throw DeviceError("kernel " + name + ": no value for argument " + std::to_string(i));
      int64_t x = (int64_t)*v;
      int32_t x32 = (int32_t)x;
      int16_t x16 = (int16_t)x;
      int8_t x8 = (int8_t)x;
      const void* p = kind == 8 ? (const void*)&x : kind == 4 ? (const void*)&x32 : kind == 2 ? (const void*)&x16 : &x8;
      st = clSetKernelArg(kernel_, (cl_uint)i, (size_t)kind, p);
    }
    check(st, "kernel " + name + ": argument " + std::to_string(i));
  }
  size_t global[3], local[3];
  for (int d = 0; d < 3; d++) {
    global[d] = (size_t)la.global_size[(size_t)d];
    if (la.local_size) local[d] = (size_t)(*la.local_size)[(size_t)d], global[d] *= local[d];
  }
  cl_event ev = nullptr;
  cl_int st = clEnqueueNDRangeKernel(dev_.queue, kernel_, 3, nullptr, global, la.local_size ? local : nullptr, 0,
                                     nullptr, la.wait ? &ev : nullptr);
  if (st != CL_SUCCESS) {
    auto dims = [](const size_t* d) {
      return "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + "]";
    };
    throw DeviceError("kernel " + name + " on " + dev_.device + ": launch with global " + dims(global) +
                      (la.local_size ? ", local " + dims(local) : std::string()) + " failed: " + error_str(st));
  }
  if (!la.wait) return std::nullopt;
  struct Release {
    cl_event e;
    ~Release() { clReleaseEvent(e); }
  } release{ev};
  check(clWaitForEvents(1, &ev), "kernel " + name + " on " + dev_.device);
  cl_ulong start = 0, end = 0;
  check(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr),
        "kernel " + name + ": CL_PROFILING_COMMAND_START");
  check(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr),
        "kernel " + name + ": CL_PROFILING_COMMAND_END");
  last_range_ = std::make_pair((int64_t)start + dev_.tdiff_ns, (int64_t)end + dev_.tdiff_ns);
  return (double)(end - start) * 1e-9;
}

// ***** CLDevice *****

// the device index of "CL:1"; "CL" is DEV's index when DEV=CL:N, else 0
size_t device_index(const std::string& device) {
  auto digits = [](const std::string& s) { return !s.empty() && std::all_of(s.begin(), s.end(), ::isdigit); };
  size_t c = device.find(':');
  if (c != std::string::npos) {
    std::string idx = device.substr(c + 1);
    if (!digits(idx)) throw DeviceError("CL: '" + device + "' is not a device: use CL or CL:N");
    return std::stoul(idx);
  }
  std::string dev = getenv_str("DEV", "");
  size_t dc = dev.find(':');
  if (dc != std::string::npos && canonicalize_device(dev.substr(0, dc)) == "CL") {
    std::string idx = dev.substr(dc + 1);
    idx = idx.substr(0, idx.find(':'));
    if (digits(idx)) return std::stoul(idx);
  }
  return 0;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

CLDevice::CLDevice(const std::string& device) : Compiled(device) {
  const DeviceIds& ids = device_ids();
  if (ids.ids.empty()) throw DeviceError(ids.error);
  size_t idx = device_index(device);
  if (idx >= ids.ids.size())
    throw DeviceError("CL: no device " + std::to_string(idx) + " (DEV=" + getenv_str("DEV", "") + "): platform '" +
                      ids.platform + "' has " + std::to_string(ids.ids.size()) +
                      " device(s), CL:0 to CL:" + std::to_string(ids.ids.size() - 1));
  cl_dev = ids.ids[idx];
  device_name = device_info_str(cl_dev, CL_DEVICE_NAME);
  driver_version = device_info_str(cl_dev, CL_DRIVER_VERSION);
  if (DEBUG >= 1) std::printf("CLDevice: opening %s with version %s\n", device_name.c_str(), driver_version.c_str());
  cl_int st = CL_SUCCESS;
  context = clCreateContext(nullptr, 1, &cl_dev, nullptr, nullptr, &st);
  check(st, device + " (" + device_name + "): clCreateContext");
  queue = clCreateCommandQueue(context, cl_dev, CL_QUEUE_PROFILING_ENABLE, &st);
  check(st, device + " (" + device_name + "): clCreateCommandQueue");
  std::string exts = device_info_str(cl_dev, CL_DEVICE_EXTENSIONS), arch;
  for (size_t p = 0; p < exts.size();) {
    size_t s = exts.find_first_not_of(' ', p);
    if (s == std::string::npos) break;
    size_t e = exts.find(' ', s);
    if (e == std::string::npos) e = exts.size();
    arch += (arch.empty() ? "" : ",") + exts.substr(s, e - s);
    p = e;
  }
  char key[64];
  std::snprintf(key, sizeof(key), "compile_cl_%016llx",
                (unsigned long long)fnv1a(device_name + driver_version + kMagic));
  allocator_ = std::make_unique<CLAllocator>(device, *this);
  compiler_ = std::make_unique<CLCompiler>(*this, key);
  renderer_ = std::make_unique<OpenCLRenderer>(Target{"CL", "", arch, "", ""});
  sync_clocks();
}

CLDevice::~CLDevice() {
  allocator_.reset();
  if (queue) clReleaseCommandQueue(queue);
  if (context) clReleaseContext(context);
}

// host clock - device clock, from the tightest of a few timed one-byte writes (the reference's tdiff of a
// ProfileDeviceEvent): the write ran on the device between the two host reads around it
void CLDevice::sync_clocks() {
  cl_int st = CL_SUCCESS;
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, 1, nullptr, &st);
  if (st != CL_SUCCESS) return;
  uint8_t byte = 0;
  int64_t best = INT64_MAX;
  for (int i = 0; i < 5; i++) {
    cl_event ev = nullptr;
    int64_t h0 = now_ns();
    if (clEnqueueWriteBuffer(queue, m, CL_TRUE, 0, 1, &byte, 0, nullptr, &ev) != CL_SUCCESS) break;
    int64_t h1 = now_ns();
    cl_ulong s = 0, e = 0;
    bool ok = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(s), &s, nullptr) == CL_SUCCESS &&
              clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(e), &e, nullptr) == CL_SUCCESS;
    clReleaseEvent(ev);
    if (ok && h1 - h0 < best) best = h1 - h0, tdiff_ns = (h0 + h1) / 2 - (int64_t)(s + e) / 2;
  }
  clReleaseMemObject(m);
  if (profile::enabled()) profile::emit(ProfileDeviceEvent{device, tdiff_ns, device_name + ", " + driver_version});
}

}  // namespace

void register_device() {
  static std::once_flag once;
  std::call_once(
      once, [] { tg::register_device("CL", [](const std::string& dev) { return std::make_unique<CLDevice>(dev); }); });
}

std::vector<std::string> list_devices() {
  std::vector<std::string> out;
  try {
    const DeviceIds& ids = device_ids();
    for (cl_device_id d : ids.ids) out.push_back(ids.platform + ": " + device_info_str(d, CL_DEVICE_NAME));
  } catch (const std::exception&) {
  }
  return out;
}

}  // namespace tg::cl
