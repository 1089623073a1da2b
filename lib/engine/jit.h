// Port of tinygrad/engine/jit.py (TinyJit on one device). A TinyJit wraps a function of Tensors: the first call runs
// it normally, the second captures every schedule it makes (the scheduler's `capturing` hook) and lowers them into one
// LINEAR (trace context "JIT N calls": inputs become PARAMs, the memory planner shares intermediates, every kernel is
// compiled once), and later calls replay that LINEAR on the new inputs without scheduling or codegen.
//   tg::TinyJit step([&](const std::vector<tg::Tensor>& in) { return std::vector<tg::Tensor>{model(in[0]).sum()}; });
//   for (...) loss = step({x})[0];
// Inputs must be realized buffers (not consts) of the same shapes, dtypes and devices on every call; otherwise a
// JitError says which input differs. Graph batching (JIT_BATCH_SIZE) is left out: the CPU device has no graph runner.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lib/helpers.h"
#include "lib/schedule/schedule.h"
#include "lib/tensor.h"

namespace tg {

class JitError : public Error {
 public:
  using Error::Error;
};

extern ContextVar JIT;  // JIT=0 runs the function every time

class TinyJit : public LinearCapturer {
 public:
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  explicit TinyJit(Fn fn, bool prune = false);
  ~TinyJit() override;
  // var_vals: the values of bound Variables passed beside the tensors
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs, const std::map<std::string, pyint>& var_vals = {});
  void reset();              // capture again on the next calls
  int64_t cnt() const { return cnt_; }
  size_t captured_calls() const;  // calls (kernels and copies) of the captured LINEAR, 0 before capture
  void add_linear(const UOp& linear, const std::map<std::string, pyint>& var_vals) override;

  struct InputInfo {
    UOp view;  // the input with its buffer replaced by NOOP and Variables unbound
    std::vector<std::string> vars;
    DType dtype;
    std::string device;
    std::string shape;  // checked too: the reference replays a (3,) capture on a (4,) input and returns 3 values
    bool operator==(const InputInfo& o) const {
      return view == o.view && vars == o.vars && dtype == o.dtype && device == o.device && shape == o.shape;
    }
  };

 private:
  struct Captured;
  Fn fn_;
  bool prune_;
  int64_t cnt_ = 0;
  std::vector<UOp> linears_;
  std::unique_ptr<Captured> captured_;
};

}  // namespace tg
