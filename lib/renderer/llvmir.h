// Port of tinygrad/renderer/llvmir.py: LLVM IR as text (typed pointers, as the reference writes it). LLVMRenderer
// holds the shared rendering, CPULLVMRenderer is the CPU device's LLVM flavour. No LLVM headers: the IR is a string,
// the CPU backend parses and compiles it.
#pragma once
#include <string>
#include <vector>

#include "lib/codegen/late/uop_props.h"
#include "lib/renderer/renderer.h"
#include "lib/uop/nodemap.h"

namespace tg {

// ldt: the LLVM type of a dtype (a vector when count > 1, a pointer when ptr)
// the LLVM type name (a reference to a per-thread table: a kernel spells a few types hundreds of times)
const std::string& ldt(DType dt, pyint count = 1, bool ptr = false);
// lconst: a constant as LLVM spells it (floats truncated to the dtype, inf/nan as hex doubles)
std::string lconst(const PyConst& x, DType dtype);
// lcast: the cast instruction between two dtypes
std::string lcast(DType input_type, DType output_type);

// the state of one render call: the name of every value (ctx in the reference's string rules)
struct LLVMContext {
  // keyed by the rendered list's nodes, which it keeps alive while the context lives
  BorrowedNodeMap<std::string> r;
  AddrSpaceCache as;
  // clang numerics (llvm_clang_rewrite): how often each uop is a src in the list (the C renderer's child_count), and
  // the intrinsics the kernel calls
  BorrowedNodeMap<int> uses;
  BorrowedNodeMap<UOp> user;  // the one user of a uop used once
  std::vector<std::string> decls;
  // n: the rendered list's length; the clang tables are sized for it only when they are used
  explicit LLVMContext(size_t n = 64, bool clang = true) : r(n), uses(clang ? n : 16), user(clang ? n : 16) {}
  const std::string& operator[](const UOp& u) const;
  // declares an intrinsic once: `declare <ret> @name(<args>)`
  void declare(const std::string& decl);
};
const StringMatcher& llvm_base_rewrite();
// the float arithmetic of clang -O2 on the C renderer's source (the reference's DEV=CPU): no fast-math flags, and a
// product added or subtracted in the same C expression (a MUL used once, which the C renderer inlines) fused into
// llvm.fmuladd as clang contracts it (-ffp-contract=on: the left operand first, never through a negation); NEG, SUB
// and SQRT are native as in the C renderer
const StringMatcher& llvm_clang_rewrite();

class LLVMRenderer : public Renderer {
 public:
  explicit LLVMRenderer(Target target);
  std::string abi;  // empty is None
  const StringMatcher* string_rewrite = nullptr;
  bool clang_numerics = false;  // string_rewrite includes llvm_clang_rewrite
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
  // clang_numerics: the ClangRenderer's native ops and clang's floating-point semantics (llvm_clang_rewrite), so the
  // kernels compute what the reference's DEV=CPU computes; otherwise the reference's DEV=CPU:LLVM
  explicit CPULLVMRenderer(Target target, bool clang_numerics = false);
  std::string render(const std::vector<UOp>& uops) const override;
  std::vector<DType> supported_dtypes() const override;

 protected:
  virtual std::string render_footer(const std::vector<UOp>& uops) const;
};

}  // namespace tg
