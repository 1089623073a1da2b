// Port of tinygrad/runtime/ops_python.py's device: PythonRenderer (the base Renderer's capabilities with python_alu as
// code_for_op), PythonCompiler, PythonAllocator (host bytes) and PythonDevice, whose programs run the linearized UOps
// in the interpreter (interp::Program). Registered as "PYTHON" (host data of Tensors built from C++ values, like the
// reference) and "INTERP" (DEV=INTERP: the reference's DEV=PYTHON).
//
// The "source" a PythonRenderer renders is the linear program encoded with lib/uop/serialize (the reference pickles
// the UOps); the runtime decodes it back.
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <sstream>

#include "backends/interp/interp.h"
#include "lib/device.h"
#include "lib/renderer/renderer.h"
#include "lib/uop/serialize.h"

namespace tg::interp {

namespace {

// the opaque handle of a PYTHON/INTERP buffer: host bytes with their size (the interpreter checks bounds)
struct HostMem {
  uint8_t* data = nullptr;
  size_t nbytes = 0;
};

class PythonAllocator : public Allocator {
 public:
  using Allocator::Allocator;
  void copyin(void* dest, std::span<const uint8_t> src) override {
    auto* m = static_cast<HostMem*>(dest);
    std::memcpy(m->data, src.data(), std::min(src.size(), m->nbytes));
  }
  void copyout(std::span<uint8_t> dest, void* src) override {
    auto* m = static_cast<HostMem*>(src);
    std::memcpy(dest.data(), m->data, std::min(dest.size(), m->nbytes));
  }
  void* offset(void* buf, size_t size, size_t off) override {
    auto* m = static_cast<HostMem*>(buf);
    std::lock_guard<std::mutex> lk(mu_);
    views_.push_back(HostMem{m->data + off, size});
    return &views_.back();
  }

 protected:
  void* alloc_impl(size_t size, const BufferSpec& options) override {
    auto* m = new HostMem{nullptr, size};
    if (options.external_ptr)
      m->data = reinterpret_cast<uint8_t*>(*options.external_ptr);
    else
      m->data = static_cast<uint8_t*>(std::calloc(size ? size : 1, 1));
    if (!m->data) {
      delete m;
      throw DeviceError("out of host memory allocating " + std::to_string(size) + " bytes on " + device);
    }
    return m;
  }
  void free_impl(void* opaque, size_t, const BufferSpec& options) override {
    auto* m = static_cast<HostMem*>(opaque);
    if (!options.external_ptr) std::free(m->data);
    delete m;
  }

 private:
  std::mutex mu_;
  std::deque<HostMem> views_;  // view handles live as long as the device (they are a few bytes each)
};

class PythonRenderer : public Renderer {
 public:
  explicit PythonRenderer(const std::string& device) : Renderer(Target{device, "PYTHON", "", "", ""}) {
    CodeFn none = [](const std::vector<std::string>&, DType) -> std::string { return ""; };
    for (Ops op : {Ops::LOG2,     Ops::EXP2,     Ops::SQRT,   Ops::RECIPROCAL, Ops::SIN,   Ops::POW,   Ops::TRUNC,
                   Ops::NEG,      Ops::ADD,      Ops::SUB,    Ops::MUL,        Ops::CMPNE, Ops::CMPLT, Ops::XOR,
                   Ops::OR,       Ops::AND,      Ops::SHR,    Ops::SHL,        Ops::MAX,   Ops::CMOD,  Ops::CDIV,
                   Ops::FLOORDIV, Ops::FLOORMOD, Ops::MULACC, Ops::WHERE,      Ops::CMPEQ})
      code_for_op.set(op, none);
  }
  std::string render(const std::vector<UOp>& uops) const override {
    std::string out;
    for (const std::string& l : encode_graph(UOp(Ops::LINEAR, DType(), uops))) out += l + "\n";
    return out;
  }
  // The reference's PythonRenderer drops half below Python 3.12 (memoryview has no 'e' format there), and its pinned
  // Python is 3.11: codegen then emulates half as float (decomp "half -> float": half in memory, float arithmetic,
  // rounded to half only where it is stored), so the oracle computes what the reference's PYTHON device computes.
  std::vector<DType> supported_dtypes() const override {
    std::vector<DType> out;
    for (DType d : Renderer::supported_dtypes())
      if (d != dtypes::half) out.push_back(d);
    return out;
  }
};

class PythonCompiler : public Compiler {
 public:
  std::vector<uint8_t> compile(const std::string& src) override { return {src.begin(), src.end()}; }
};

class PythonProgram : public tg::Program {
 public:
  PythonProgram(const std::string& name, std::span<const uint8_t> lib) : tg::Program(name) {
    std::vector<std::string> lines;
    std::istringstream in(std::string(lib.begin(), lib.end()));
    for (std::string l; std::getline(in, l);)
      if (!l.empty()) lines.push_back(l);
    UOp lin = decode_graph(lines);
    prg_ = std::make_unique<interp::Program>(std::vector<UOp>(lin.src().begin(), lin.src().end()));
  }
  std::optional<double> operator()(std::span<void* const> bufs, std::span<const std::optional<pyint>> vals,
                                   const LaunchArgs& args) override {
    std::vector<BufferView> views;
    for (void* b : bufs) {
      auto* m = static_cast<HostMem*>(b);
      views.push_back(BufferView{m->data, m->nbytes, dtypes::uint8});
    }
    LaunchDims dims;
    dims.global = args.global_size;
    if (args.local_size) dims.local = *args.local_size;
    int64_t st = now_ns();
    prg_->run(views, vals, dims);
    if (args.wait) return (double)(now_ns() - st) * 1e-9;
    return std::nullopt;
  }

 private:
  std::unique_ptr<interp::Program> prg_;
};

class PythonDevice : public Compiled {
 public:
  explicit PythonDevice(const std::string& device) : Compiled(device), allocator_(device), renderer_(device) {}
  Allocator& allocator() override { return allocator_; }
  Compiler& compiler() override { return compiler_; }
  const Renderer& renderer() override { return renderer_; }
  std::unique_ptr<tg::Program> runtime(const std::string& name, std::span<const uint8_t> lib) override {
    return std::make_unique<PythonProgram>(name, lib);
  }

 private:
  PythonAllocator allocator_;
  PythonCompiler compiler_;
  PythonRenderer renderer_;
};

}  // namespace

void register_device() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* name : {"PYTHON", "INTERP"})
      tg::register_device(name, [](const std::string& d) { return std::make_unique<PythonDevice>(d); });
  });
}

}  // namespace tg::interp
