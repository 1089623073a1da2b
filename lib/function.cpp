// Port of tinygrad/function.py (the UOp part): FUNCTION calls, implicit inputs, invalid outputs.
#include "lib/function.h"

#include "lib/codegen/late/uop_props.h"
#include "lib/device.h"
#include "lib/helpers.h"
#include "lib/tensor.h"
#include "lib/uop/kernel_info.h"
#include "lib/uop/rewrite.h"

namespace tg {

UOp maketuple(std::span<const UOp> srcs) {
  return UOp(Ops::TUPLE, DType(), std::vector<UOp>(srcs.begin(), srcs.end()));
}

UOp param_like(const UOp& u, int64_t slot) { return uop_param_like(u, slot); }

UOp gettuple(const UOp& f, int64_t idx) {
  const UOp& in_tuple = f.op() == Ops::FUNCTION ? f.src(0) : f;
  if (in_tuple.op() != Ops::TUPLE)
    throw Error(std::string("gettuple requires FUNCTION or TUPLE source, got ") + op_repr(f.op()));
  return UOp(Ops::GETTUPLE, DType(), {f}, Arg(idx));
}

UOp function_uop(const UOp& body, std::span<const UOp> srcs, std::optional<std::string> name, bool precompile,
                 bool precompile_backward) {
  // calls are launched per device, so an open DEVICE range is allowed to cross the call boundary
  for (const UOp& r : body.ranges())
    if (!(r.arg().is_tuple() && r.arg().size() && r.arg()[r.arg().size() - 1].kind() == Arg::Kind::Axis &&
          r.arg()[r.arg().size() - 1].as_axis() == AxisType::DEVICE))
      throw Error("call: ranges are leaking out of the call");
  static const OpSet opaque{Ops::SINK, Ops::PROGRAM, Ops::LINEAR, Ops::COPY, Ops::CUSTOM_FUNCTION};
  if (opaque.has(body.op())) throw Error("function_uop: an opaque body is a CALL (uop_call), not a FUNCTION");
  std::vector<UOp> src{body.op() == Ops::TUPLE ? body : maketuple(std::span<const UOp>(&body, 1))};
  src.insert(src.end(), srcs.begin(), srcs.end());
  return UOp(Ops::FUNCTION, DType(), src, CallInfo(std::move(name), precompile, precompile_backward).to_arg());
}

UOpSet invalid_outputs(const UOp& uret) {
  // invalids() returns fresh write-only scratch: a clone storing CONST(Invalid); only fresh buffers, not realized ones
  UOpSet out;
  for (const UOp& u : uret.toposort())
    if (u.op() == Ops::STORE && u.src(1).base().is_invalid() && !uop_is_realized(buf_uop(u.src(0))))
      out.insert(buf_uop(u.src(0)));
  return out;
}

UOp renumber_invalid_outputs(const UOp& uret) {
  UOpSet inv = invalid_outputs(uret);
  std::vector<std::pair<UOp, UOp>> subs;
  int64_t i = 0;
  for (const UOp& b : uret.toposort(nullptr, false)) {
    if (!inv.count(b)) continue;
    ParamArg pa(*b.param_arg());
    pa.slot = i++;
    subs.emplace_back(b, b.with_arg(pa.to_arg()));
  }
  return uret.substitute(subs);
}

namespace {

struct ImplicitCtx {
  std::vector<UOp>& call_uops;
  UOpSet invalid;
};

UOp add_to_ctx(ImplicitCtx& ctx, const UOp& x) {
  if (ctx.invalid.count(buf_uop(x))) return UOp();
  UOp ret = uop_param_like(x, (int64_t)ctx.call_uops.size());
  ctx.call_uops.push_back(x);
  return ret;
}

const PatternMatcher& pm_ctx() {
  static const PatternMatcher pm(
      "pm_ctx", {
                    TG_RULE(UPat(Ops::BUFFER).named("x"), [](ImplicitCtx& ctx, U x) { return add_to_ctx(ctx, x); }),
                    TG_RULE(UPat(ops(Ops::AFTER, Ops::CONTIGUOUS)).named("x"),
                            [](ImplicitCtx& ctx, U x) {
                              if (!x.op_in_backward_slice_with_self(OpSet{Ops::PARAM}) &&
                                  x.op_in_backward_slice_with_self(OpSet{Ops::BUFFER}))
                                return add_to_ctx(ctx, x);
                              return UOp();
                            }),
                });
  return pm;
}

}  // namespace

std::vector<UOp> call_function(std::span<const UOp> inputs, std::span<const UOp> rets, const FunctionOpts& opts) {
  if (rets.empty()) throw Error("call_function: the function returned nothing");
  // deduplicate the inputs with a device, keeping the first occurrence
  std::vector<UOp> call_uops;
  UOpSet seen;
  for (const UOp& u : inputs)
    if (!u.device().is_none() && seen.insert(u).second) call_uops.push_back(u);
  UOp uret = rets.size() == 1 ? rets[0] : maketuple(rets);
  // replace the known inputs with params (using deduplicated slots)
  std::vector<std::pair<UOp, UOp>> subs;
  for (size_t i = 0; i < call_uops.size(); i++)
    subs.emplace_back(call_uops[i], uop_param_like(call_uops[i], (int64_t)i));
  uret = uret.substitute(subs);
  // the BUFFERs that are left are the implicit inputs
  size_t num_explicit = call_uops.size();
  ImplicitCtx ctx{call_uops, invalid_outputs(uret)};
  uret = graph_rewrite(uret, pm_ctx(), RewriteOpts{.ctx = &ctx, .bottom_up = true, .name = "get_implicit_inputs"});
  uret = renumber_invalid_outputs(uret);
  std::string name = opts.name.value_or("function");
  if (!opts.allow_implicit) {
    std::string bufs;
    int n = 0;
    for (size_t i = num_explicit; i < call_uops.size(); i++)
      if (call_uops[i].op() == Ops::BUFFER) {
        const UOp& b = call_uops[i];
        bufs += "\n  " + std::to_string(n++) + ": dtype=" + b.dtype().repr() + ", device=" + b.device().repr();
      }
    if (n)
      throw Error("function " + name + " has " + std::to_string(n) + " implicit buffer(s), but allow_implicit=False" +
                  bufs);
  }
  UOp fret = function_uop(uret, call_uops, name, opts.precompile, opts.precompile_backward);
  std::vector<UOp> out;
  for (size_t i = 0; i < rets.size(); i++) out.push_back(gettuple(fret, (int64_t)i));
  return out;
}

}  // namespace tg
