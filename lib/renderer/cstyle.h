// Port of tinygrad/renderer/cstyle.py: base_rewrite (how each op is spelled in C), CStyleLanguage (SSA naming,
// single-use inlining, kernel signature), ClangRenderer (the CPU device's default renderer) and OpenCLRenderer (the CL
// device's). The Metal, CUDA and HIP renderers subclass CStyleLanguage the same way when they are ported.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/codegen/late/uop_props.h"
#include "lib/renderer/renderer.h"

namespace tg {

class CStyleLanguage;

// the state of one render call (the reference keeps it on the renderer as self.r): the string each UOp renders to
struct CStyleContext {
  const CStyleLanguage* lang;
  UOpMap<std::string> r;
  AddrSpaceCache as;
  const std::string& operator[](const UOp& u) const;
  std::optional<AddrSpace> addrspace(const UOp& u) { return as.get(u); }
};

// the string rules every C-style language starts from (ctx: CStyleContext)
const StringMatcher& cstyle_base_rewrite();

// rules that compute in float for dtypes a language lacks (ALU ops, WHERE, comparisons, optional casts through float)
PatternMatcher create_non_native_float_pats(const DTypes& dts, bool casting = true);
UOp cast_float_to_bf16(const UOp& x);
// manual bfloat16 <-> float casts (shared by the LLVM, Clang and AMD renderers to avoid compiler intrinsics)
const PatternMatcher& pm_manual_bf16_cast();
// (dtype, max_numel) of every value computed in registers, in first-use order
std::vector<std::pair<DType, pyint>> uops_to_dtypes(const std::vector<UOp>& uops);
// python str.format with positional fields ({} and {0}) and {{ }} escapes, for CUSTOM/CUSTOMI args
std::string py_format(const std::string& fmt, const std::vector<std::string>& args);

class CStyleLanguage : public Renderer {
 public:
  explicit CStyleLanguage(Target target);
  std::string abi;
  std::string kernel_typedef = "void";
  std::string buffer_prefix, buffer_suffix, smem_align, smem_prefix;
  bool smem_prefix_for_cast = true;
  std::string var_prefix = "const ", var_suffix, barrier;
  std::vector<std::pair<char, std::function<std::string(const std::string&)>>> code_for_workitem;  // 'g', 'l', 'i'
  std::vector<std::string> extra_args;
  std::optional<std::string> float4;
  std::pair<std::string, std::string> float4_style{"(", ")"};
  int64_t gep_arr_threshold = 4;
  std::vector<std::pair<DType, std::string>> type_map;
  std::string infinity = "INFINITY", nan = "NAN";
  const StringMatcher* string_rewrite;

  // (name, (PARAM, mutable)) in slot order
  using BufArg = std::pair<std::string, std::pair<UOp, bool>>;
  virtual std::string render_kernel(const std::string& function_name, const std::vector<std::string>& kernel,
                                    const std::vector<BufArg>& bufs, const std::vector<UOp>& uops,
                                    const std::optional<std::vector<std::string>>& prefix = std::nullopt) const;
  std::string render(const std::vector<UOp>& uops) const override;

  // helpers the string rules call
  std::string render_index(CStyleContext& ctx, const UOp& x, const UOp& buf, const UOp& idx) const;
  std::string render_buffer(CStyleContext& ctx, const UOp& x) const;
  virtual std::string render_dtype_full(DType dtype, pyint sz = 1, std::optional<AddrSpace> addrspace = AddrSpace::ALU,
                                        bool mutable_ = true, bool override_ptr = false,
                                        const std::optional<Shape>& shape = std::nullopt) const;  // _render_dtype
  std::string render_type(CStyleContext& ctx, const UOp& u) const;
  std::string render_access(CStyleContext& ctx, const UOp& u) const;
  std::string render_cast(CStyleContext& ctx, const UOp& u, const std::string& val) const;
  std::string render_dtype(DType dt) const;  // LEGACY: scalar register type
  std::string code_for_workitem_of(char kind, const std::string& dim) const;

 protected:
  struct Rendered {
    std::string name;
    std::vector<std::string> kernel;
    std::vector<BufArg> bufs;
  };
  Rendered render_lines(const std::vector<UOp>& uops) const;  // _render
};

class ClangRenderer : public CStyleLanguage {
 public:
  explicit ClangRenderer(Target target);
  std::string render_vector_prefix(DType dt, pyint count) const;
  std::string render_kernel(const std::string& function_name, const std::vector<std::string>& kernel,
                            const std::vector<BufArg>& bufs, const std::vector<UOp>& uops,
                            const std::optional<std::vector<std::string>>& prefix = std::nullopt) const override;
  std::vector<DType> supported_dtypes() const override;
  static const PatternMatcher& clang_extra_matcher();

 protected:
  virtual std::vector<std::string> render_defines(const std::vector<UOp>& uops) const;
  virtual std::string render_entry(const std::string& function_name, const std::vector<BufArg>& bufs) const;
};

// renderer/cstyle.py OpenCLRenderer: OpenCL C for the CL device (backends/cl). target.arch holds the device's
// extensions, comma separated (cl_khr_fp16 enables half, cl_khr_fp64 double).
class OpenCLRenderer : public CStyleLanguage {
 public:
  explicit OpenCLRenderer(Target target);
  std::string render_kernel(const std::string& function_name, const std::vector<std::string>& kernel,
                            const std::vector<BufArg>& bufs, const std::vector<UOp>& uops,
                            const std::optional<std::vector<std::string>>& prefix = std::nullopt) const override;
  std::vector<DType> supported_dtypes() const override;
};

}  // namespace tg
