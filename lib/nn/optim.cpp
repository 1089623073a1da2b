#include "lib/nn/optim.h"

#include "lib/helpers.h"
#include "lib/mixin/helpers.h"
#include "lib/nn/nn.h"

namespace tg::nn {

static std::vector<Tensor> dedup(const std::vector<Tensor>& v) {
  std::vector<Tensor> out;
  for (const Tensor& t : v) {
    bool seen = false;
    for (const Tensor& o : out) seen = seen || o.is(t);
    if (!seen) out.push_back(t);
  }
  return out;
}

Optimizer::Optimizer(std::vector<Tensor> ps, double lr_v) {
  if (lr_v < 0) throw Error("Invalid learning rate: " + std::to_string(lr_v));
  std::vector<Tensor> p, b;
  for (const Tensor& t : ps) (t.is_param() ? p : b).push_back(t);
  params = dedup(p);
  buffers = dedup(b);  // buffers are still realized
  if (params.empty()) throw Error("optimizer must have at least one param");
  param_dtype = dtypes::by_name(getenv_str("OPTIM_DTYPE", "float32"));
  // store lr in at least float32 precision
  lr = Tensor::from_vector<double>({lr_v}, dtypes::float32, params[0].device());
}

std::vector<Tensor> Optimizer::new_optim_param() const {
  std::vector<Tensor> out;
  for (const Tensor& t : params) out.push_back(Tensor::zeros(t.shape(), param_dtype, t.device()));
  return out;
}

std::vector<Tensor> Optimizer::schedule_step(const std::vector<Tensor>& grads) {
  if (!TRAINING.value())
    throw Error("TRAINING=" + std::to_string(TRAINING.value()) +
                ", TRAINING must be enabled to use the optimizer (Context c({{\"TRAINING\", 1}}) before step())");
  if (grads.size() != params.size())
    throw Error("optimizer step: " + std::to_string(grads.size()) + " gradients for " + std::to_string(params.size()) +
                " params");
  for (size_t i = 0; i < params.size(); i++)
    if (!shape_eq(grads[i].shape(), params[i].shape()))
      throw Error("optimizer step: the gradient of param " + std::to_string(i) + " has shape " +
                  mixin::shape_str(grads[i].shape()) + ", the param " + mixin::shape_str(params[i].shape()));
  auto [updates, extra] = _step(params, grads);
  for (size_t i = 0; i < params.size(); i++) params[i].assign(params[i].detach() - updates[i].to(params[i].device()));
  std::vector<Tensor> out = extra;
  out.insert(out.end(), params.begin(), params.end());
  out.insert(out.end(), buffers.begin(), buffers.end());
  return out;
}

void Optimizer::step(const std::vector<Tensor>& grads) { Tensor::realize_all(schedule_step(grads)); }

std::vector<Tensor> Optimizer::schedule_step() {
  std::vector<Tensor> grads;
  for (size_t i = 0; i < params.size(); i++) {
    std::optional<Tensor> g = params[i].grad();
    if (!g)
      throw Error("optimizer step: param " + std::to_string(i) + " " + params[i].repr() +
                  " has no gradient (call backward() on the loss first)");
    grads.push_back(*g);
  }
  return schedule_step(grads);
}

void Optimizer::step() { Tensor::realize_all(schedule_step()); }

void Optimizer::zero_grad() {
  for (Tensor& p : params) p.set_grad(std::nullopt);
}

// ***** LARS, SGD, Muon *****

LARS::LARS(std::vector<Tensor> ps, double lr, double momentum, double weight_decay, int64_t ns_steps,
           std::vector<double> ns_coefficients, bool nesterov, bool classic, bool pre_wd, double tcoef)
    : Optimizer(std::move(ps), lr), momentum(momentum), wd(weight_decay), ns_steps(ns_steps),
      ns_coefficients(std::move(ns_coefficients)), nesterov(nesterov), classic(classic), pre_wd(pre_wd), tcoef(tcoef) {
  if (momentum < 0) throw Error("Invalid momentum value: " + std::to_string(momentum));
  if (momentum != 0) b = new_optim_param();
}

std::pair<std::vector<Tensor>, std::vector<Tensor>> LARS::_step(const std::vector<Tensor>& ps,
                                                                 const std::vector<Tensor>& grads) {
  std::vector<Tensor> ret;
  for (size_t i = 0; i < ps.size(); i++) {
    Tensor t = ps[i], g = grads[i];
    std::optional<Tensor> r;  // None: 1.0
    if (tcoef != 0) {
      Tensor r1 = t.detach().square().sum().sqrt();
      Tensor r2 = g.square().sum().sqrt();
      r = (r1 > 0).where((r2 > 0).where(tcoef * r1 / (r2 + wd * r1), 1.0), 1.0);
    }
    if (pre_wd && wd > 0) g = g + wd * t.detach();
    // classic momentum does post learning rate update
    if (classic) g = (r ? g * *r : g * 1.0) * lr;
    if (momentum != 0) {
      b[i].assign(momentum * b[i] + g);  // b[i] is zero on the first run, no if required
      g = nesterov ? g + momentum * b[i] : b[i];
    }
    if (!ns_coefficients.empty())
      g = newton_schulz(g.reshape({g.shape()[0], sint(-1)}), ns_steps, ns_coefficients).reshape(g.shape());
    // muon does post momentum weight decay
    if (!pre_wd && wd > 0) t = t.detach() * (1.0 - wd * lr);
    // popular momentum does pre learning rate update
    if (!classic) g = (r ? g * *r : g * 1.0) * lr;
    ret.push_back(g.cast(t.dtype()));
  }
  return {ret, b};
}

std::shared_ptr<Optimizer> SGD(std::vector<Tensor> params, double lr, double momentum, double weight_decay,
                               bool nesterov, bool classic) {
  // LARS with a trust coefficient of 0 is SGD
  return std::make_shared<LARS>(std::move(params), lr, momentum, weight_decay, 0, std::vector<double>{}, nesterov,
                                classic, true, 0.0);
}

std::shared_ptr<Optimizer> Muon(std::vector<Tensor> params, double lr, double momentum, double weight_decay,
                                int64_t ns_steps, std::vector<double> ns_coefficients, bool nesterov) {
  return std::make_shared<LARS>(std::move(params), lr, momentum, weight_decay, ns_steps, std::move(ns_coefficients),
                                nesterov, false, false, 0.0);
}

Tensor newton_schulz(const Tensor& x, int64_t steps, const std::vector<double>& ps, double eps) {
  if (x.ndim() < 2) throw Error("newton_schulz: NS only works for two or more dims");
  const Shape& s = x.shape();
  if (s[s.size() - 2].i() > s[s.size() - 1].i())
    return newton_schulz(x.transpose(-2, -1), steps, ps, eps).transpose(-2, -1);
  Tensor G = x / (x.square().sum(AxisArg(std::vector<int64_t>{-2, -1}), true).sqrt() + eps);
  for (int64_t k = 0; k < steps; k++) {
    std::optional<Tensor> acc;
    for (size_t i = 0; i < ps.size(); i++) {
      Tensor term = G;  // (G G^T)^i G
      for (size_t j = 0; j < i; j++) term = G.matmul(G.transpose(-2, -1)).matmul(term);
      Tensor pt = ps[i] * term;
      acc = acc ? *acc + pt : pt;
    }
    G = *acc;
  }
  return G;
}

// ***** LAMB, Adam, AdamW *****

LAMB::LAMB(std::vector<Tensor> ps, double lr, double b1, double b2, double eps, double weight_decay, bool adam)
    : Optimizer(std::move(ps), lr), b1(b1), b2(b2), eps(eps), wd(weight_decay), adam(adam),
      b1_t(Tensor::ones({1}, dtypes::float32, params[0].device()).is_param_(false)),
      b2_t(Tensor::ones({1}, dtypes::float32, params[0].device()).is_param_(false)) {
  if (weight_decay < 0) throw Error("Invalid weight_decay value: " + std::to_string(weight_decay));
  m = new_optim_param();
  v = new_optim_param();
}

std::pair<std::vector<Tensor>, std::vector<Tensor>> LAMB::_step(const std::vector<Tensor>& ps,
                                                                 const std::vector<Tensor>& grads) {
  std::vector<Tensor> ret;
  b1_t.assign(b1_t * b1);
  b2_t.assign(b2_t * b2);
  for (size_t i = 0; i < ps.size(); i++) {
    const Tensor& t = ps[i];
    Tensor g = grads[i];
    m[i].assign((b1 * m[i] + (1.0 - b1) * g).cast(m[i].dtype()));
    v[i].assign((b2 * v[i] + (1.0 - b2) * (g * g)).cast(v[i].dtype()));
    Tensor m_hat = m[i] / (1.0 - b1_t);
    Tensor v_hat = v[i] / (1.0 - b2_t);
    Tensor up = (m_hat / (v_hat.sqrt() + eps)).to(t.device()) + wd * t.detach();  // shard_like(t) on one device
    if (!adam) {
      Tensor r1 = t.detach().square().sum().sqrt();
      Tensor r2 = up.square().sum().sqrt();
      Tensor r = (r1 > 0).where((r2 > 0).where(r1 / r2, 1.0), 1.0);
      ret.push_back((lr * r * up).cast(t.dtype()));
    } else {
      ret.push_back((lr * 1.0 * up).cast(t.dtype()));
    }
  }
  std::vector<Tensor> extra{b1_t, b2_t};
  extra.insert(extra.end(), m.begin(), m.end());
  extra.insert(extra.end(), v.begin(), v.end());
  return {ret, extra};
}

std::shared_ptr<Optimizer> AdamW(std::vector<Tensor> params, double lr, double b1, double b2, double eps,
                                 double weight_decay) {
  return std::make_shared<LAMB>(std::move(params), lr, b1, b2, eps, weight_decay, true);
}
std::shared_ptr<Optimizer> Adam(std::vector<Tensor> params, double lr, double b1, double b2, double eps) {
  return std::make_shared<LAMB>(std::move(params), lr, b1, b2, eps, 0.0, true);
}

// ***** OptimizerGroup *****

static std::vector<Tensor> all_params(const std::vector<std::shared_ptr<Optimizer>>& os) {
  std::vector<Tensor> out;
  for (const auto& o : os) out.insert(out.end(), o->params.begin(), o->params.end());
  return out;
}

OptimizerGroup::OptimizerGroup(std::vector<std::shared_ptr<Optimizer>> os)
    : Optimizer(all_params(os), 0.0), optimizers(std::move(os)) {
  for (const auto& o : optimizers) buffers.insert(buffers.end(), o->buffers.begin(), o->buffers.end());
}

std::vector<Tensor> OptimizerGroup::schedule_step(const std::vector<Tensor>& grads) {
  std::vector<Tensor> out;
  size_t at = 0;
  for (const auto& o : optimizers) {
    std::vector<Tensor> g(grads.begin() + (std::ptrdiff_t)std::min(at, grads.size()),
                          grads.begin() + (std::ptrdiff_t)std::min(at + o->params.size(), grads.size()));
    at += o->params.size();
    auto r = o->schedule_step(g);
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

std::pair<std::vector<Tensor>, std::vector<Tensor>> OptimizerGroup::_step(const std::vector<Tensor>&,
                                                                           const std::vector<Tensor>&) {
  throw Error("OptimizerGroup::_step: call schedule_step");
}

}  // namespace tg::nn
