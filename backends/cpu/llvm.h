// The LLVM side of the CPU device (the only place LLVM is used; its headers stay in llvm.cpp):
//   * LLVMCompiler, a port of runtime/support/compiler_llvm.py's CPULLVMCompiler: LLVM IR text -> parse -> verify ->
//     the `default<O2>` pipeline (loop unrolling, loop and SLP vectorization) for the host CPU and its features (found
//     at run time) -> an ELF object (bytes), like LLVMTargetMachineEmitToMemoryBuffer;
//   * LLVMJit, the loader (the reference's elf.py jit_loader): an ORC LLJIT into which each object is linked in a
//     JITDylib of its own (same kernel names never clash; unloading frees its memory), external symbols (libm, the
//     compiler runtime) resolved from the process.
//
// The launcher calls a kernel the way the reference's CPUProgram does, with one uint64 per argument (buffer
// addresses, then Variable values). To do that with a plain C++ call, compile adds to the module, for every function
// it defines, an entry `void __tg_entry_<name>(const uint64_t* args)` that converts args[i] to the i-th parameter
// (inttoptr, trunc) and calls the kernel (kept out of line, so it is optimized and emitted once, like the reference
// compiles it: its alwaysinline becomes noinline), and a constant
// `__tg_sig_<name>`: the parameter count, then one word per parameter (kind | alignment << 8), which the launcher
// checks calls against.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lib/device.h"

namespace tg::cpu {

// TRUNC calls of the LLVM IR renderer (`@llvm.trunc.float`, undeclared, like the reference renders them) renamed to
// the mangled intrinsics and declared, so LLVM accepts them (the reference's own DEV=CPU:LLVM compile refuses them)
std::string declare_trunc_intrinsics(const std::string& src);
// float literals without a '.' (python's "1e-05") get one ("1.0e-05"), which LLVM's lexer requires
std::string fix_float_literals(const std::string& src);

// the time spent in each stage of one compile, in milliseconds
struct CompileTiming {
  double parse = 0, opt = 0, codegen = 0;
  double total() const { return parse + opt + codegen; }
};

class LLVMCompiler : public Compiler {
 public:
  // optimize=false is LLVMOPT=0 (the `default<O0>` pipeline); verify_each runs the verifier after every pass (the
  // reference sets it: LLVMPassBuilderOptionsSetVerifyEach)
  explicit LLVMCompiler(bool optimize = true, bool verify_each = false);
  ~LLVMCompiler() override;
  std::vector<uint8_t> compile(const std::string& src) override;
  std::vector<uint8_t> compile(const std::string& src, CompileTiming* timing);
  // the optimized module as text (what DEBUG>=7 prints), for tests and debugging
  std::string optimized_ir(const std::string& src);
  // the machine code as assembly text (what the object holds), for tests and debugging
  std::string assembly(const std::string& src);
  // the object's code disassembled (AT&T syntax, jump targets labelled, loops marked), for the trace
  std::optional<MachineCode> machine_code(std::span<const uint8_t> lib) const override;
  const std::string& cpu_name() const;
  const std::string& features() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// the kinds of parameters an entry converts a uint64 to
enum class ParamKind : uint8_t { INT = 0, PTR = 1, FLOAT = 2 };
struct ParamSig {
  ParamKind kind;
  uint32_t align;  // the pointer's `align` attribute (0: none)
};

class LLVMJit {
 public:
  static std::shared_ptr<LLVMJit> create();  // one per device
  ~LLVMJit();

  // one object linked into its own JITDylib; unloaded when destroyed
  class Library {
   public:
    ~Library();
    // the entry of kernel `name` and its signature; throws DeviceError naming the kernels the object has
    using Entry = void (*)(const uint64_t* args);
    Entry entry(const std::string& name, std::vector<ParamSig>* sig) const;
    std::vector<std::string> kernels() const;  // the functions with an entry, in the object's symbol order

   private:
    friend class LLVMJit;
    struct Impl;
    std::unique_ptr<Impl> impl_;
  };
  // throws DeviceError when the object cannot be loaded or linked
  std::unique_ptr<Library> load(std::span<const uint8_t> object);

 private:
  LLVMJit();
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace tg::cpu
