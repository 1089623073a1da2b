// The weights' layout for the CPU's convolution kernels (CPU_CONV_LAYOUT=1, not in the reference): which weights
// OpMixin::conv2d reads on a Tensor (lib/mixin/op.cpp). The why and the numbers are in conv_layout.cpp.
#pragma once
#include "lib/tensor.h"

namespace tg {

// the weights [cout, cin, kh, kw] as conv2d reads them: through a copy with cout innermost when the layout applies
// (DEV=CPU's CLANG renderer, training, each weight used at least 256 times per call: `reuse` = images x output
// pixels), else `weight` itself
Tensor cpu_conv_weight(const Tensor& weight, const sint& reuse);

}  // namespace tg
