// Port of tinygrad/nn/optim.py: Optimizer, LARS (and SGD/Muon built on it), LAMB (and Adam/AdamW built on it),
// OptimizerGroup. The update math is the reference's, line for line, so a seeded run takes the same steps.
// Like the reference, the tensors given are split into params (is_param) and buffers (BatchNorm statistics: realized
// with the step), and step() reads each param's .grad (filled by Tensor::backward):
//   auto opt = tg::nn::Adam(tg::get_parameters(model.state_dict()), 1e-3);
//   tg::Context c({{"TRAINING", 1}});
//   opt->zero_grad(); loss.backward(); opt->step();   // or Tensor::realize_all({loss, opt->schedule_step()...})
// schedule_step(grads)/step(grads) take the gradients explicitly instead, in params order.
// Not ported: FUSE_OPTIM (fused buffers) and multi-device params.
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "lib/tensor.h"

namespace tg::nn {

class Optimizer {
 public:
  Optimizer(std::vector<Tensor> params, double lr);
  virtual ~Optimizer() = default;
  // the tensors to realize for one step: optimizer state, then the updated params (assigned), then buffers
  virtual std::vector<Tensor> schedule_step(const std::vector<Tensor>& grads);
  void step(const std::vector<Tensor>& grads);  // schedule_step + realize
  std::vector<Tensor> schedule_step();           // with each param's .grad (an error names a param without one)
  void step();
  void zero_grad();                              // every param's .grad = None
  std::vector<Tensor> params, buffers;
  Tensor lr;  // a (1,) float32 tensor so it can change without recompiling

 protected:
  virtual std::pair<std::vector<Tensor>, std::vector<Tensor>> _step(const std::vector<Tensor>& params,
                                                                     const std::vector<Tensor>& grads) = 0;
  std::vector<Tensor> new_optim_param() const;  // zeros like each param, in OPTIM_DTYPE (float32)
  DType param_dtype;
};

class LARS : public Optimizer {
 public:
  LARS(std::vector<Tensor> params, double lr = 0.001, double momentum = 0.9, double weight_decay = 1e-4,
       int64_t ns_steps = 0, std::vector<double> ns_coefficients = {}, bool nesterov = false, bool classic = true,
       bool pre_wd = true, double tcoef = 0.001);
  double momentum, wd;
  int64_t ns_steps;
  std::vector<double> ns_coefficients;
  bool nesterov, classic, pre_wd;
  double tcoef;
  std::vector<Tensor> b;

 protected:
  std::pair<std::vector<Tensor>, std::vector<Tensor>> _step(const std::vector<Tensor>& params,
                                                             const std::vector<Tensor>& grads) override;
};

class LAMB : public Optimizer {
 public:
  LAMB(std::vector<Tensor> params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999, double eps = 1e-6,
       double weight_decay = 0.0, bool adam = false);
  double b1, b2, eps, wd;
  bool adam;
  Tensor b1_t, b2_t;
  std::vector<Tensor> m, v;

 protected:
  std::pair<std::vector<Tensor>, std::vector<Tensor>> _step(const std::vector<Tensor>& params,
                                                             const std::vector<Tensor>& grads) override;
};

class OptimizerGroup : public Optimizer {
 public:
  explicit OptimizerGroup(std::vector<std::shared_ptr<Optimizer>> optimizers);
  std::vector<Tensor> schedule_step(const std::vector<Tensor>& grads) override;  // grads of all params, in order
  std::vector<std::shared_ptr<Optimizer>> optimizers;

 protected:
  std::pair<std::vector<Tensor>, std::vector<Tensor>> _step(const std::vector<Tensor>&,
                                                             const std::vector<Tensor>&) override;
};

std::shared_ptr<Optimizer> SGD(std::vector<Tensor> params, double lr = 0.001, double momentum = 0.0,
                               double weight_decay = 0.0, bool nesterov = false, bool classic = false);
std::shared_ptr<Optimizer> Muon(std::vector<Tensor> params, double lr = 0.001, double momentum = 0.95,
                                double weight_decay = 0.1, int64_t ns_steps = 5,
                                std::vector<double> ns_coefficients = {3.4445, -4.775, 2.0315}, bool nesterov = true);
std::shared_ptr<Optimizer> AdamW(std::vector<Tensor> params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999,
                                 double eps = 1e-8, double weight_decay = 0.01);
std::shared_ptr<Optimizer> Adam(std::vector<Tensor> params, double lr = 0.001, double b1 = 0.9, double b2 = 0.999,
                                double eps = 1e-8);

// mixin op.py's newton_schulz (Muon): the odd polynomial sum_i p_i (G G^T)^i G, `steps` times, on G normalized
Tensor newton_schulz(const Tensor& x, int64_t steps, const std::vector<double>& params, double eps = 1e-7);

}  // namespace tg::nn
