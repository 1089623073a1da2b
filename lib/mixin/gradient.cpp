#include "lib/mixin/gradient.h"

#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "lib/function.h"
#include "lib/helpers.h"
#include "lib/mixin/helpers.h"
#include "lib/uop/kernel_info.h"

namespace tg {

using namespace mixin;  // sint arithmetic, shape_str

namespace {

using Grads =
    std::optional<std::vector<std::optional<UOp>>>;  // None (no rule), else one entry per src (None = no grad)

std::vector<int64_t> range_n(int64_t n) {
  std::vector<int64_t> r(n);
  std::iota(r.begin(), r.end(), 0);
  return r;
}

Grads reduce_gradient(const UOp& ctx, const UOp& ret, Ops op) {
  const UOp& x = ret.src(0);
  std::vector<int64_t> axes = range_n(ret.arg()[1].as_int());
  if (op == Ops::ADD) return Grads{{ctx.broadcast_to(x.shape())}};
  if (op == Ops::MAX) {
    UOp mask = x.eq(ret).cast(ctx.dtype());
    return Grads{{(mask / mask.rop(Ops::ADD, axes)) * ctx}};
  }
  if (op == Ops::MUL) {
    // d(prod x)/dx_j = prod_{i!=j} x_i: ret/x_j whenever x_j != 0 (any zero makes ret 0), else the product of the
    // others
    UOp is_zero = x.eq(0);
    UOp safe_x = is_zero.where(1, x);
    UOp zero_count = is_zero.cast(sum_acc_dtype(is_zero.dtype())).rop(Ops::ADD, axes);
    return Grads{{ctx * is_zero.where(zero_count.eq(1).where(safe_x.rop(Ops::MUL, axes), 0), ret / safe_x)}};
  }
  return std::nullopt;
}

// PAD/SHRINK marg: zip(src[1].as_shape, src[2].as_shape)
std::vector<std::pair<sint, sint>> pair_marg(const UOp& u) {
  Shape a = u.src(1).as_shape(), b = u.src(2).as_shape();
  std::vector<std::pair<sint, sint>> r;
  for (size_t i = 0; i < a.size() && i < b.size(); i++) r.emplace_back(a[i], b[i]);
  return r;
}

// pm_gradient.rewrite(ret, ctx=grad): the first rule of the reference's table matching ret
Grads local_gradient(const UOp& ctx, const UOp& ret) {
  using G = std::vector<std::optional<UOp>>;
  const double LN2 = std::log(2.0);
  size_t n = ret.nsrc();
  switch (ret.op()) {
    case Ops::CAST:
      return G{ctx.cast(ret.src(0).dtype())};
    case Ops::RECIPROCAL:
      return G{-ctx * ret * ret};
    case Ops::SIN:
      return G{(M_PI / 2 - ret.src(0)).sin() * ctx};
    case Ops::LOG2:
      return G{ctx / (ret.src(0) * LN2)};
    case Ops::EXP2:
      return G{ret * ctx * LN2};
    case Ops::SQRT:
      return G{ctx / (ret * 2)};
    case Ops::TRUNC:
      return G{ctx.const_like(0)};
    case Ops::CMPLT:
    case Ops::CMPNE:
      return G{std::nullopt, std::nullopt};
    case Ops::ADD:
      return G{ctx, ctx};
    case Ops::POW: {
      if (n != 2) return std::nullopt;
      const UOp &b = ret.src(0), &e = ret.src(1);
      return G{ctx * e.eq(0).where(e, e * b.pow(e - 1)),
               ctx * b.eq(0).where((e < 0).where(ret.const_like(-INFINITY), 0), ret * b.log2() * LN2)};
    }
    case Ops::MAX: {
      if (n != 2) return std::nullopt;
      const UOp &x = ret.src(0), &y = ret.src(1);
      return G{(x > y).where(ctx, x.eq(y).where(ctx * 0.5, 0)), (x < y).where(ctx, x.eq(y).where(ctx * 0.5, 0))};
    }
    case Ops::MUL:
      return G{ret.src(1) * ctx, ret.src(0) * ctx};
    case Ops::WHERE:
      return G{std::nullopt, ret.src(0).where(ctx, ctx.const_like(0)), ret.src(0).where(ctx.const_like(0), ctx)};
    case Ops::REDUCE:
      return reduce_gradient(ctx, ret, ret.arg()[0].as_op());
    case Ops::CONTIGUOUS:
      return G{ctx};
    case Ops::CONTIGUOUS_BACKWARD:
      return G{ctx.contiguous()};
    case Ops::RESHAPE:
      return G{ctx.reshape(ret.src(0).shape()), std::nullopt};
    case Ops::EXPAND:
      return G{ctx, std::nullopt};
    case Ops::PAD: {
      PadArg a;
      auto m = pair_marg(ret);
      const Shape& s = ret.src(0).shape();
      for (size_t i = 0; i < s.size() && i < m.size(); i++) a.emplace_back(m[i].first, s[i] + m[i].first);
      return G{ctx.shrink(a), std::nullopt, std::nullopt};
    }
    case Ops::SHRINK: {
      PadArg a;
      auto m = pair_marg(ret);
      const Shape& s = ret.src(0).shape();
      for (size_t i = 0; i < s.size() && i < m.size(); i++) a.emplace_back(m[i].first, s[i] - m[i].first - m[i].second);
      return G{ctx.pad(a), std::nullopt, std::nullopt};
    }
    case Ops::PERMUTE: {
      const Arg& order = ret.marg_arg();
      std::vector<int64_t> inv(order.size());
      std::iota(inv.begin(), inv.end(), 0);
      // helpers.argsort: indices sorted by value (stable)
      std::stable_sort(inv.begin(), inv.end(),
                       [&](int64_t a, int64_t b) { return order[a].as_int() < order[b].as_int(); });
      return G{ctx.permute(inv)};
    }
    case Ops::FLIP: {
      const Arg& m = ret.marg_arg();
      std::vector<int64_t> axes;
      for (size_t i = 0; i < m.size(); i++)
        if (m[i].as_bool()) axes.push_back(int64_t(i));
      return G{ctx.flip(axes)};
    }
    case Ops::STACK: {
      G r;
      for (size_t i = 0; i < n; i++) r.push_back(ctx.getitem({Index(int64_t(i))}));
      return r;
    }
    case Ops::TUPLE: {
      G r;
      for (const UOp& s : ctx.src()) r.push_back(s);
      return r;
    }
    case Ops::AFTER:
      if (n == 2 && ret.src(1).op() == Ops::CALL) {
        const UOp &d = ret.src(0), &k = ret.src(1);
        size_t di = 0;
        while (di < k.nsrc() && !(k.src(di) == d)) di++;
        std::vector<UOp> t;
        for (size_t i = 0; i + 1 < k.nsrc(); i++) t.push_back(i + 1 == di ? ctx : UOp(Ops::NOOP));
        return G{ctx, UOp(Ops::TUPLE, DType(), t)};
      }
      if (n == 2 && ret.src(1).op() == Ops::STORE) return G{std::nullopt, ctx};
      return std::nullopt;
    case Ops::STORE:
      if (n == 2) return G{std::nullopt, ctx};
      return std::nullopt;
    case Ops::BITCAST:
      return G{std::nullopt};
    case Ops::COPY:
    case Ops::UNSHARD:
      throw Error(std::string("gradient: ") + op_repr(ret.op()) + " (copies between devices) is not supported yet");
    default:
      return std::nullopt;
  }
}

UOp maketuple(std::vector<UOp> srcs) { return UOp(Ops::TUPLE, DType(), srcs); }

// _compact_params: remove the unused PARAMs from body, renumbering the used ones 0.. in slot order
std::pair<UOp, std::vector<UOp>> compact_params(const UOp& body, const std::vector<UOp>& all_args) {
  std::map<int64_t, UOp> used;
  for (const UOp& p : body.toposort())
    if (p.op() == Ops::PARAM) used[p.param_arg()->slot] = p;
  std::vector<std::pair<UOp, UOp>> subs;
  std::vector<UOp> args;
  int64_t j = 0;
  for (const auto& [slot, p] : used) {
    ParamArg pa(*p.param_arg());
    pa.slot = j++;
    subs.emplace_back(p, p.with_arg(pa.to_arg()));
    if (slot < 0 || (size_t)slot >= all_args.size())
      throw Error("gradient: PARAM slot " + std::to_string(slot) + " has no arg in the backward call");
    args.push_back(all_args[(size_t)slot]);
  }
  return {body.substitute(subs, nullptr, true), args};
}

// call_gradient: the gradient of a FUNCTION whose body is a TUPLE is a backward FUNCTION (without grad_fxn)
std::vector<std::optional<UOp>> call_gradient(const UOp& ctx, const UOp& k, const std::set<size_t>& needed) {
  const UOp& fxn = k.src(0);
  if (k.op() != Ops::FUNCTION || fxn.op() != Ops::TUPLE)
    throw Error(std::string("gradient through ") + op_repr(k.op()) + ": expected TUPLE body for gradient, got " +
                op_repr(fxn.op()) + " (a custom grad_fxn is not supported yet, function.py)");
  if (ctx.op() != Ops::TUPLE) throw Error("gradient: the gradient of a FUNCTION must be a TUPLE");
  const CallInfo* info = k.arg().as<CallInfo>();
  bool precompile = info && info->precompile, precompile_backward = info && info->precompile_backward;
  std::vector<UOp> args(k.src().begin() + 1, k.src().end());
  std::map<int64_t, UOp> params;
  for (const UOp& x : fxn.toposort(nullptr, false))
    if (x.op() == Ops::PARAM) params[x.param_arg()->slot] = x;
  std::vector<UOp> grad_args(ctx.src().begin(), ctx.src().end());
  std::vector<UOp> rg;
  for (size_t i = 0; i < grad_args.size(); i++) {
    const UOp& g = grad_args[i];
    rg.push_back(g.op() == Ops::NOOP    ? UOp(Ops::NOOP)
                 : g.device().is_none() ? g
                                        : param_like(g, (int64_t)(args.size() + i)));
  }
  UOpSet targets;
  for (const auto& [_, p] : params) targets.insert(p);
  UOpMap<UOp> grads = compute_gradient(fxn, maketuple(rg), targets);
  // for precompiled calls, substitute forward outputs with params so intermediates aren't recomputed
  std::vector<std::pair<UOp, UOp>> fwd_subs;
  std::vector<UOp> all_args = args;
  all_args.insert(all_args.end(), grad_args.begin(), grad_args.end());
  if (precompile)
    for (size_t i = 0; i < fxn.nsrc(); i++) {
      fwd_subs.emplace_back(fxn.src(i), param_like(fxn.src(i), (int64_t)(args.size() + grad_args.size() + i)));
      all_args.push_back(gettuple(k, (int64_t)i));
    }
  // collect needed gradient bodies, compact unused params, create a single backward FUNCTION
  std::vector<std::pair<size_t, UOp>> grad_bodies;
  for (size_t i : needed) {
    auto p = params.find((int64_t)i);
    if (p == params.end()) continue;
    auto g = grads.find(p->second);
    if (g != grads.end()) grad_bodies.emplace_back(i, g->second);
  }
  std::vector<UOp> gbs;
  for (const auto& [_, gb] : grad_bodies) gbs.push_back(gb);
  UOp bwd_body = maketuple(gbs).substitute(fwd_subs, nullptr, true);
  bwd_body = renumber_invalid_outputs(bwd_body);
  auto [cbody, compact_args] = compact_params(bwd_body, all_args);
  UOp bwd_call = function_uop(cbody, compact_args, (info && info->name ? *info->name : std::string()) + "_backward",
                              precompile_backward);
  std::vector<std::optional<UOp>> out{std::nullopt};
  for (size_t i = 0; i < args.size(); i++) {
    std::optional<UOp> r;
    for (size_t idx = 0; idx < grad_bodies.size(); idx++)
      if (grad_bodies[idx].first == i) r = gettuple(bwd_call, (int64_t)idx);
    out.push_back(r);
  }
  return out;
}

}  // namespace

UOpMap<UOp> compute_gradient(const UOp& root, const UOp& root_grad, const UOpSet& targets) {
  // _deepwalk: the nodes on a path to a target, in toposort order; DETACH does not pass gradients
  std::vector<UOp> topo = root.toposort();
  UOpMap<bool> in_target_path;
  in_target_path.reserve(topo.size());
  for (const UOp& u : topo) {
    bool on = false;
    for (const UOp& s : u.src())
      if (in_target_path[s] || targets.count(s)) {
        on = true;
        break;
      }
    in_target_path[u] = on;
  }
  std::vector<UOp> walk;
  for (const UOp& u : topo)
    if (u.op() != Ops::DETACH && in_target_path[u]) walk.push_back(u);

  UOpMap<UOp> grads;
  grads.emplace(root, root_grad);
  for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
    const UOp& t0 = *it;
    auto g = grads.find(t0);
    if (g == grads.end() || g->second.op() == Ops::NOOP) continue;
    UOp gt0 = g->second;
    if (t0.op() == Ops::GETTUPLE) {
      // accumulate into a TUPLE gradient of the FUNCTION, processed when the walk reaches it
      const UOp& k = t0.src(0);
      if (k.op() != Ops::FUNCTION || k.src(0).op() != Ops::TUPLE) throw Error("gradient: GETTUPLE of a non-FUNCTION");
      size_t n_out = k.src(0).nsrc();
      int64_t idx = t0.arg().as_int();
      std::vector<UOp> prev;
      auto kg = grads.find(k);
      if (kg != grads.end())
        prev.assign(kg->second.src().begin(), kg->second.src().end());
      else
        prev.assign(n_out, UOp(Ops::NOOP));
      std::vector<UOp> nt;
      for (size_t i = 0; i < n_out; i++)
        nt.push_back(int64_t(i) == idx ? (prev[i].op() != Ops::NOOP ? prev[i] + gt0 : gt0) : prev[i]);
      grads[k] = maketuple(nt);
      continue;
    }
    Grads lgrads;
    if (t0.op() == Ops::FUNCTION || t0.op() == Ops::CALL) {
      // pass the needed param set so the backward only computes the required gradients
      std::set<size_t> needed;
      for (size_t i = 1; i < t0.nsrc(); i++) {
        auto itp = in_target_path.find(t0.src(i));
        if (targets.count(t0.src(i)) || (itp != in_target_path.end() && itp->second)) needed.insert(i - 1);
      }
      lgrads = call_gradient(gt0, t0, needed);
    } else {
      lgrads = local_gradient(gt0, t0);
    }
    if (!lgrads) {
      std::string s = uop_repr(t0);
      throw Error(std::string("failed to compute gradient for ") + op_repr(t0.op()) + "\n\nin " + s.substr(0, 1000) +
                  "...");
    }
    if (lgrads->size() != t0.nsrc())
      throw Error("gradient: got " + std::to_string(lgrads->size()) + " gradients, expected " +
                  std::to_string(t0.nsrc()) + " for " + op_repr(t0.op()));
    for (size_t i = 0; i < t0.nsrc(); i++) {
      if (!(*lgrads)[i]) continue;
      const UOp& k = t0.src(i);
      UOp v = *(*lgrads)[i];
      // a shaped edge's gradient is summed to its source's shape
      const auto &ks = k.shape_opt(), &vs = v.shape_opt();
      if (ks && vs && !shape_eq(*ks, *vs))
        v = v.cast(sum_acc_dtype(v.dtype())).rop(Ops::ADD, broadcast_axes(*ks, *vs)).reshape(*ks).cast(v.dtype());
      auto kg = grads.find(k);
      if (kg != grads.end() && kg->second.op() != Ops::NOOP) {
        const UOp& p = kg->second;
        if (v.op() == Ops::TUPLE && p.op() == Ops::TUPLE) {
          std::vector<UOp> nt;
          for (size_t j = 0; j < p.nsrc(); j++) {
            const UOp &a = p.src(j), &b = v.src(j);
            nt.push_back(a.op() != Ops::NOOP && b.op() != Ops::NOOP ? a + b : a.op() == Ops::NOOP ? b : a);
          }
          kg->second = maketuple(nt);
        } else {
          kg->second = p + v;
        }
      } else {
        grads[k] = v;
      }
    }
  }
  return grads;
}

std::vector<UOp> gradient(const UOp& self, const std::vector<UOp>& targets, const UOp& grad) {
  if (!grad && !self.shape().empty())
    throw Error("when no gradient is provided, backward must be called on a scalar tensor (shape " +
                shape_str(self.shape()) + ")");
  bool all_float = self.is_floating_point();
  for (const UOp& t : targets) all_float = all_float && t.is_floating_point();
  if (!all_float) throw Error("only float Tensors have gradient");
  for (const UOp& t : targets)
    for (DType w : dtypes::weaks)
      if (t.dtype() == w) throw Error("cannot take gradient wrt a weak Tensor");
  UOp g = grad ? grad : self.const_like(1.0);
  UOpSet tset(targets.begin(), targets.end());
  UOpMap<UOp> grads = compute_gradient(self, g, tset);
  std::vector<UOp> out;
  for (const UOp& t : targets) {
    auto it = grads.find(t);
    out.push_back(it != grads.end() ? it->second : t.const_like(0));
  }
  return out;
}

}  // namespace tg
