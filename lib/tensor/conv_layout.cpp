// The weights' layout for the CPU's convolution kernels (CPU_CONV_LAYOUT=1, not in the reference).
//
// A convolution's weights [cout, cin, kh, kw] are read by its forward and by its input gradient. The input gradient
// (the reference's transposed convolution) reduces over cout innermost, and its register tile puts its vector lanes
// along cin (lib/codegen/opt/heuristic.cpp), so with the weights as they are every lane steps 800 floats per reduce
// step (5x5, 32 channels) and each of the 16 lanes' loads touches another cache line on every step. Read through a
// copy with cout innermost ([cin, kh, kw, cout], one small kernel per convolution and step), each lane walks its own
// cache line one float per step, and the forward can take its lanes along cout, one weight vector per tap:
// beautiful_mnist's second convolution's input gradient takes 168 ms instead of 303 ms, its forward 102 ms instead of
// 160 ms, and the steady step 0.75 s instead of 0.96 s (AMD EPYC, Zen 2). A copy changes no value: every output is
// summed by the same ops in the same order. Only where the register tiles apply (DEV=CPU's CLANG renderer), in
// training (where the input gradient, the biggest gain, runs; inference keeps the reference's graph) and where each
// weight is used at least kMinReuse times per call (a convolution whose weights outweigh its activations would double
// its memory traffic).
#include "lib/tensor/conv_layout.h"

#include "lib/codegen/opt/heuristic.h"
#include "lib/device.h"
#include "lib/helpers.h"

namespace tg {

ContextVar CPU_CONV_LAYOUT("CPU_CONV_LAYOUT", 1, 0, 1);

Tensor cpu_conv_weight(const Tensor& weight, const sint& reuse) {
  constexpr int64_t kMinReuse = 256;
  const Arg dev = weight.device();
  if (CPU_CONV_LAYOUT.value() && weight.ndim() == 4 && Tensor::training() && reuse.is_int() && reuse.i() >= kMinReuse &&
      dev.is_str() && cpu_tiles_apply(get_device(dev.as_str()).renderer()))
    return weight.permute({1, 2, 3, 0}).contiguous().permute({3, 0, 1, 2});
  return weight;
}

}  // namespace tg
