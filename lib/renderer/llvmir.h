// Port of tinygrad/renderer/llvmir.py: LLVM IR as text (typed pointers, as the reference writes it). LLVMRenderer
// holds the shared rendering, CPULLVMRenderer is the CPU device's LLVM flavour. No LLVM headers: the IR is a string,
// the CPU backend parses and compiles it.
#pragma once
#include <string>
#include <vector>

#include "lib/codegen/late/uop_props.h"
#include "lib/renderer/renderer.h"

namespace tg {

// ldt: the LLVM type of a dtype (a vector when count > 1, a pointer when ptr)
std::string ldt(DType dt, pyint count = 1, bool ptr = false);
// lconst: a constant as LLVM spells it (floats truncated to the dtype, inf/nan as hex doubles)
std::string lconst(const PyConst& x, DType dtype);
// lcast: the cast instruction between two dtypes
std::string lcast(DType input_type, DType output_type);

// the state of one render call: the name of every value (ctx in the reference's string rules)
struct LLVMContext {
  UOpMap<std::string> r;
  AddrSpaceCache as;
  const std::string& operator[](const UOp& u) const;
};
const StringMatcher& llvm_base_rewrite();

class LLVMRenderer : public Renderer {
 public:
  explicit LLVMRenderer(Target target);
  std::string abi;  // empty is None
  const StringMatcher* string_rewrite = nullptr;
  static const PatternMatcher& llvm_extra_matcher();

 protected:
  std::string render_fn(const std::string& name, const std::vector<std::pair<std::string, UOp>>& args,
                        const std::vector<std::string>& kernel, const std::vector<std::string>& prefix = {}) const;
  // (local args, the function)
  std::pair<std::vector<std::string>, std::string> render_kernel(const std::vector<UOp>& uops,
                                                                 const std::vector<std::string>& prefix = {}) const;
};

class CPULLVMRenderer : public LLVMRenderer {
 public:
  explicit CPULLVMRenderer(Target target);
  std::string render(const std::vector<UOp>& uops) const override;
  std::vector<DType> supported_dtypes() const override;

 protected:
  virtual std::string render_footer(const std::vector<UOp>& uops) const;
};

}  // namespace tg
