// Port of tinygrad/function.py's _function on Tensors (`@function`): calling a function through tg::function runs it
// once on the arguments and wraps what it built into one FUNCTION call (lib/function.h): the arguments become its
// PARAMs, other buffers it reads are implicit inputs (an error unless allow_implicit), and the results are the
// FUNCTION's outputs, so the body is scheduled, differentiated and cached as a unit.
//
//   tg::Function attn([](const std::vector<tg::Tensor>& a) { return std::vector<tg::Tensor>{(a[0] * a[1]).sum()}; },
//                     {.name = "attn"});
//   tg::Tensor y = attn({q, k})[0];
//
// DEBUG>=2 prints "function <key> in <ms> ms: <name>" per call like the reference. Not supported yet: grad_fxn
// (custom gradients), and realizing a precompile=true FUNCTION (its forward is not compiled as one program yet).
#pragma once
#include <functional>
#include <vector>

#include "lib/function.h"
#include "lib/tensor.h"

namespace tg {

class Function {
 public:
  using Fxn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  explicit Function(Fxn fxn, FunctionOpts opts = {}) : fxn_(std::move(fxn)), opts_(std::move(opts)) {}
  std::vector<Tensor> operator()(const std::vector<Tensor>& args) const;

 private:
  Fxn fxn_;
  FunctionOpts opts_;
};

}  // namespace tg
