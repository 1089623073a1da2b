// Port of the part of tinygrad/codegen/decomp/dtype.py the CPU renderers need: detection of the dtypes a renderer
// must emulate (pm_dtype_decomps) and the float emulation (pm_float_decomp: e.g. float16 stored as uint16 and computed
// in float32 by CPULLVMRenderer). The long-as-two-ints emulation (pm_long_decomp) is not ported: both CPU renderers
// support int64; a kernel that would need it raises.
#pragma once
#include <vector>

#include "lib/renderer/renderer.h"

namespace tg {

// ctx of pm_dtype_decomps: the dtypes seen (a set) and the renderer
struct DtypeDecompCtx {
  std::vector<DType> seen;
  const Renderer* ren = nullptr;
};
// ctx of pm_float_decomp: (fr, to)
struct FloatDecompCtx {
  DType fr, to;
};
const PatternMatcher& pm_dtype_decomps();
const PatternMatcher& pm_float_decomp();
UOp f2f(const UOp& v, DType fr, DType to, bool sat = true);
UOp f2f_clamp(const UOp& val, DType dt, bool sat = true);

}  // namespace tg
