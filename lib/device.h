// Port of the device interfaces of tinygrad/device.py: BufferSpec, Allocator, Compiler (with its cache keyed by
// source), Program, Compiled (one device: allocator, compiler, runtime, renderer) and the Device registry. lib/ only
// defines the interfaces; a backend (backends/cpu, ...) implements them and registers a factory under its device name,
// so the engine never depends on LLVM or OpenCL:
//
//   tg::cpu::register_device();                          // (or tg::cpu::CPUDevice::get())
//   tg::Compiled& dev = tg::get_device("CPU");
//   auto prg = dev.compile(src, "E_4");                  // compiler().compile_cached(src) + runtime("E_4", lib)
//   prg->run(bufs, vals, /*global_size=*/{2, 1, 1});      // or (*prg)({out, a, b}, {std::nullopt}, LaunchArgs{...})
//
// Buffers are opaque handles (a host address on CPU). A Program is called like the reference's Program.__call__: the
// buffers in ProgramInfo.globals order, the Variable values in ProgramInfo.vars order with nullopt for the runtime
// variables the launcher fills (core_id), the launch dims.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "lib/dtype.h"
#include "lib/helpers.h"
#include "profiler/events.h"

namespace tg {

class Renderer;

// device.CompileError: source a compiler refused (the message names the kernel and carries the compiler's diagnostic)
class CompileError : public Error {
 public:
  using Error::Error;
};
// a device refused a call or an allocation (wrong argument count, unknown function, out of memory, unknown device)
class DeviceError : public Error {
 public:
  using Error::Error;
};

struct BufferSpec {
  bool uncached = false, cpu_access = false, host = false, nolru = false, zero = false;
  std::optional<uintptr_t> external_ptr;  // wrap memory the caller owns instead of allocating
};

// Allocator: alloc/free of opaque device buffers and the host copies. alloc checks the size and turns failures into a
// DeviceError naming the device and the size.
class Allocator {
 public:
  explicit Allocator(std::string device) : device(std::move(device)) {}
  virtual ~Allocator() = default;
  const std::string device;
  void* alloc(size_t size, const BufferSpec& options = {});
  void free(void* opaque, size_t size, const BufferSpec& options = {});
  virtual void copyin(void* dest, std::span<const uint8_t> src) = 0;
  virtual void copyout(std::span<uint8_t> dest, void* src) = 0;
  // a view of size bytes at offset into buf (Buffer.view); devices without views refuse
  virtual void* offset(void* buf, size_t size, size_t offset);
  // the largest buffer the device can hold: the machine's physical memory for host devices
  virtual uint64_t max_buffer_bytes() const;

 protected:
  virtual void* alloc_impl(size_t size, const BufferSpec& options) = 0;
  virtual void free_impl(void* opaque, size_t size, const BufferSpec& options) {}
};

// device.LRUAllocator: a freed buffer is kept for the next allocation of the same size and options (LRU=0 turns this
// off; buffers with nolru, zero or external memory are never cached). When an allocation fails the cache is freed and
// the allocation tried once more. A backend implements lru_alloc/lru_free instead of alloc_impl/free_impl.
class LRUAllocator : public Allocator {
 public:
  using Allocator::Allocator;
  ~LRUAllocator() override = default;  // a backend frees its cache in its own destructor (free_cache)
  void free_cache();
  size_t cached_buffers() const;

 protected:
  void* alloc_impl(size_t size, const BufferSpec& options) final;
  void free_impl(void* opaque, size_t size, const BufferSpec& options) final;
  virtual void* lru_alloc(size_t size, const BufferSpec& options) = 0;
  virtual void lru_free(void* opaque, size_t size, const BufferSpec& options) = 0;

 private:
  using Key = std::tuple<size_t, bool, bool, bool>;  // size, uncached, cpu_access, host
  mutable std::mutex mu_;
  std::map<Key, std::vector<void*>> cache_;
};

// Compiler: source text -> a loadable library (bytes). compile_cached keeps every result in memory keyed by the
// source, and on disk (lib/diskcache.h, table = cachekey, key = source; as the reference) unless the cachekey is
// empty, CACHELEVEL=0, CCACHE=0 or DISABLE_COMPILER_CACHE=1; ASSERT_COMPILE=1 makes a compile an error. Safe to
// call from several threads.
class Compiler {
 public:
  explicit Compiler(std::string cachekey = "") : cachekey(std::move(cachekey)) {}
  virtual ~Compiler() = default;
  std::string cachekey;
  virtual std::vector<uint8_t> compile(const std::string& src) = 0;  // throws CompileError
  std::shared_ptr<const std::vector<uint8_t>> compile_cached(const std::string& src);
  // what a library (a compile result) runs as, in readable form, for the trace: the CPU's disassembly of its object,
  // or what a device's binary is when it holds nothing readable. nullopt: this compiler knows no such form. Called
  // only while a trace is recorded.
  virtual std::optional<MachineCode> machine_code(std::span<const uint8_t> lib) const { return std::nullopt; }
  size_t cache_size() const;
  size_t cache_hits() const;
  size_t disk_hits() const;  // libraries read from the disk cache

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const std::vector<uint8_t>>, std::less<>> cache_;
  size_t hits_ = 0, disk_hits_ = 0;
};

// the launch of a program
struct LaunchArgs {
  std::array<int64_t, 3> global_size{1, 1, 1};
  std::optional<std::array<int64_t, 3>> local_size = std::array<int64_t, 3>{1, 1, 1};
  bool wait = false;  // return the wall time of the call
};

// Program: one loaded kernel of a device, callable many times (from one thread at a time per call site; calls on
// different buffers may run concurrently)
class Program {
 public:
  explicit Program(std::string name) : name(std::move(name)) {}
  virtual ~Program() = default;
  const std::string name;
  // bufs: buffer handles in ProgramInfo.globals order; vals: Variable values in ProgramInfo.vars order, nullopt for a
  // runtime variable the launcher fills (core_id). Returns the seconds the call took when args.wait, else nullopt.
  // Throws DeviceError for a call the kernel cannot take (wrong number of arguments, missing value).
  virtual std::optional<double> operator()(std::span<void* const> bufs, std::span<const std::optional<pyint>> vals = {},
                                           const LaunchArgs& args = {}) = 0;
  std::optional<double> operator()(std::initializer_list<void*> bufs,
                                   std::initializer_list<std::optional<pyint>> vals = {}, const LaunchArgs& args = {}) {
    return (*this)(std::span<void* const>(bufs.begin(), bufs.size()),
                   std::span<const std::optional<pyint>>(vals.begin(), vals.size()), args);
  }
  // where the last call that waited ran on the device's own clock, converted to the host clock (tg::now_ns), for
  // devices that time kernels themselves (CL's profiling events); nullopt on host-timed devices
  virtual std::optional<std::pair<int64_t, int64_t>> last_device_range() const { return std::nullopt; }
  // the same call with the launch dims spelled out (what realize's exec_kernel passes)
  std::optional<double> run(std::span<void* const> bufs, std::span<const std::optional<pyint>> vals,
                            std::array<int64_t, 3> global_size = {1, 1, 1},
                            std::optional<std::array<int64_t, 3>> local_size = std::array<int64_t, 3>{1, 1, 1},
                            bool wait = false) {
    return (*this)(bufs, vals, LaunchArgs{global_size, local_size, wait});
  }
};

// Compiled: one device (the reference's Compiled): its allocator, compiler, renderer and runtime (a library -> a
// Program).
class Compiled {
 public:
  explicit Compiled(std::string device) : device(std::move(device)) {}
  virtual ~Compiled() = default;
  const std::string device;
  virtual Allocator& allocator() = 0;
  virtual Compiler& compiler() = 0;
  virtual const Renderer& renderer() = 0;
  virtual std::unique_ptr<Program> runtime(const std::string& name, std::span<const uint8_t> lib) = 0;
  virtual void synchronize() {}
  // compile(src, name) -> program: compiler().compile_cached(src), then runtime(name, lib); the programs are cached by
  // (name, source) like realize.get_runtime caches runtimes
  std::shared_ptr<Program> compile(const std::string& src, const std::string& name);

 private:
  std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Program>> programs_;
};

// ***** Buffer (device.py) *****
// A device buffer: `size` elements of `dtype` on `device`, allocated lazily through the device's allocator. A view
// (base + byte offset) shares its base's memory. Buffers are held by shared_ptr; the last reference frees the memory
// (the reference frees when the BUFFER UOp dies; see uop_buffer below for how UOps keep theirs).
class Buffer : public std::enable_shared_from_this<Buffer> {
 public:
  Buffer(const std::string& device, size_t size, DType dtype, BufferSpec options = {},
         std::shared_ptr<Buffer> base = nullptr, size_t offset = 0);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  const std::string device;
  const size_t size;
  const DType dtype;
  BufferSpec options;
  const size_t offset;  // bytes into the base (views only)
  size_t nbytes() const { return size * (size_t)dtype.itemsize(); }
  Buffer& base() { return base_ ? *base_ : *this; }
  bool is_view() const { return base_ != nullptr; }
  // allocated here (views: the base is allocated and this view has its opaque)
  bool is_initialized() const { return opaque_ != nullptr; }
  bool is_allocated() const { return base_ ? base_->is_allocated() : opaque_ != nullptr; }
  Buffer& ensure_allocated() { return is_initialized() ? *this : allocate(); }
  // allocate through Device[device].allocator (or wrap `opaque`/external memory); throws if already allocated
  Buffer& allocate(void* opaque = nullptr, std::optional<uintptr_t> external_ptr = std::nullopt);
  void deallocate();
  void* opaque() const { return opaque_; }  // the device handle (_buf)
  Allocator& allocator() const;
  // host copies of the whole buffer (copyin/copyout); the sizes must match nbytes
  void copyin(std::span<const uint8_t> src);
  void copyout(std::span<uint8_t> dest);
  std::vector<uint8_t> as_bytes();  // as_memoryview: a host copy
  Buffer& copy_from(Buffer& src);   // same size; through the host
  // a view of `size` elements of `dtype` at byte `offset` of this buffer (Buffer.view)
  std::shared_ptr<Buffer> view(size_t size, DType dtype, size_t offset);
  std::string repr() const;
  int64_t uop_refcount = 0;  // BUFFER UOps holding this buffer (base only)
  // Buffer.trace_num: a number per buffer of this process, from 1: the key of its profile events (alloc, free, the
  // kernels that read and wrote it)
  const uint64_t trace_num;

 private:
  std::shared_ptr<Buffer> base_;
  void* opaque_ = nullptr;
  Allocator* allocator_ = nullptr;
  bool counted_ = false;  // counted in GlobalCounters::mem_used
};

// Device.DEFAULT: the device part of DEV (DEV=CPU:LLVM -> CPU, DEV=INTERP), else CPU
std::string default_device();
// device.canonicalize_device for one name; nullopt/empty is the default device
std::string canonicalize_device_or_default(const std::string& device);

// ***** the UOp -> Buffer association of uop/ops.py (`buffers`, UOp.buffer / realized / is_realized) *****
// The table holds the UOp and its Buffer; collect_buffers() drops the entries whose UOp only the table still holds,
// which frees the memory of buffers no Tensor or graph refers to any more (the reference frees in UOp.__del__).
class UOp;
std::shared_ptr<Buffer> uop_buffer(const UOp& u);         // UOp.buffer: created (unallocated) on first use
std::shared_ptr<Buffer> uop_buffer_get(const UOp& u);     // buffers.get(u): nullptr if none
void uop_set_buffer(const UOp& u, std::shared_ptr<Buffer> b);
std::shared_ptr<Buffer> uop_realized(const UOp& u);       // UOp.realized
bool uop_is_realized(const UOp& u);                       // UOp.is_realized (of the base)
bool uop_base_buffer_is_realized(const UOp& u);           // UOp._base_buffer_is_realized
size_t collect_buffers();                                 // returns how many entries were dropped
size_t live_buffer_count();                               // entries in the table
// UOp.contiguous_view: (BUFFER, element offset) when the movement ops on a BUFFER read one contiguous range
std::optional<std::pair<UOp, int64_t>> contiguous_view(const UOp& u);

// ***** the registry (device.Device) *****
using DeviceFactory = std::function<std::unique_ptr<Compiled>(const std::string& device)>;
// a backend registers its factory under its device name ("CPU"); registering a name again replaces nothing
void register_device(const std::string& name, DeviceFactory factory);
bool device_registered(const std::string& name);
std::vector<std::string> registered_devices();
// the device "CPU" / "cpu:0" / "CPU:1": the name before ':' upper-cased, a trailing ":0" dropped (Device.canonicalize)
std::string canonicalize_device(const std::string& device);
// Device[name]: opened on first use and kept until exit; throws DeviceError for a device no backend registered
Compiled& get_device(const std::string& device);
// the machine's physical memory in bytes
uint64_t host_memory_bytes();
// Throws DeviceError when `numel` elements of `dtype` exceed what `device` can hold (its allocator's
// max_buffer_bytes), naming the size, the device and its limit. Checked when a buffer is created (UOp::new_buffer) and
// by the creation functions, so an impossible tensor fails at once instead of in a compile or an allocation. Buffers
// up to 1 GiB and devices no backend registered are not looked up.
void check_buffer_fits(const std::string& device, pyint numel, DType dtype);

}  // namespace tg
