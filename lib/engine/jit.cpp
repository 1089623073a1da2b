#include "lib/engine/jit.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "lib/codegen/opt/opt.h"
#include "lib/device.h"
#include "lib/engine/realize.h"
#include "lib/mixin/helpers.h"
#include "lib/schedule/memory.h"
#include "lib/uop/movement.h"
#include "lib/uop/track.h"

namespace tg {

ContextVar JIT("JIT", 1, 0, 2);

using mixin::shape_str;

namespace {

std::string pluralize(const std::string& st, size_t cnt) {
  return std::to_string(cnt) + " " + st + (cnt == 1 ? "" : "s");
}

// the BUFFERs under a call arg (through MSELECT/MSTACK: memory.py's _collect_bufs)
void collect_bufs(const UOp& u, std::vector<UOp>& out) {
  if (u.op() == Ops::BUFFER)
    out.push_back(u);
  else if (u.op() == Ops::MSELECT || u.op() == Ops::MSTACK)
    for (const UOp& s : u.src()) collect_bufs(s, out);
}

// UOp.unbind_all (pm_unbind): every bound Variable replaced by the Variable, with the bound values
std::pair<UOp, std::map<std::string, pyint>> unbind_all(const UOp& u) {
  std::map<std::string, pyint> vals;
  std::vector<std::pair<UOp, UOp>> subs;
  for (const UOp& x : u.toposort())
    if (x.is_bound_var()) {
      auto [v, val] = x.unbind();
      vals[v.expr()] = val;
      subs.emplace_back(x, v);
    }
  return {subs.empty() ? u : u.substitute(subs), vals};
}

std::string device_name(const UOp& u) {
  Arg d = u.device();
  return d.is_str() ? d.as_str() : d.repr();
}

std::string view_text(const UOp& u) { return u ? uop_repr(u).substr(0, 400) : "None"; }

// prune_linear: the calls that touch the inputs (and what they produce) run every time, the rest once
std::pair<UOp, UOp> prune_linear(const UOp& linear, UOpSet needed) {
  std::vector<UOp> kept, onetime;
  for (const UOp& si : linear.src()) {
    std::vector<UOp> bufs;
    for (size_t i = 1; i < si.nsrc(); i++) collect_bufs(si.src(i), bufs);
    bool touches = false;
    for (const UOp& b : bufs) touches = touches || needed.count(b);
    if (touches) {
      kept.push_back(si);
      needed.insert(bufs.begin(), bufs.end());
    } else {
      onetime.push_back(si);
    }
  }
  return {linear.with_src(kept), linear.with_src(onetime)};
}

}  // namespace

struct TinyJit::Captured {
  std::vector<Tensor> ret;
  UOp linear;
  std::vector<InputInfo> expected;
  UOpSet written;                             // input BUFFERs the LINEAR writes: copied before each run (_copy_input)
  std::vector<std::shared_ptr<Buffer>> keep;  // the buffers the LINEAR uses stay allocated between calls

  std::vector<Tensor> run(const std::vector<UOp>& input_bufs, const std::map<std::string, pyint>& var_vals) {
    std::vector<UOp> concrete;
    for (const UOp& u : input_bufs) {
      if (!written.count(u)) {
        concrete.push_back(u);
        continue;
      }
      // the JIT writes this input: run on a copy so the caller's tensor keeps its data
      UOp fresh = UOp::new_buffer(u.device(), u.max_numel(), u.dtype());
      uop_buffer(fresh)->ensure_allocated().copy_from(uop_buffer(u)->ensure_allocated());
      concrete.push_back(fresh);
    }
    if (DEBUG >= 1 && linear.nsrc() >= 10) std::printf("jit execs %zu calls\n", linear.nsrc());
    run_linear(linear, VarVals(var_vals.begin(), var_vals.end()), concrete, true, true);
    return ret;
  }
};

TinyJit::TinyJit(Fn fn, bool prune) : fn_(std::move(fn)), prune_(prune) {}
TinyJit::~TinyJit() {
  auto& c = capturing();
  c.erase(std::remove(c.begin(), c.end(), static_cast<LinearCapturer*>(this)), c.end());
}

void TinyJit::reset() {
  cnt_ = 0;
  captured_.reset();
}

size_t TinyJit::captured_calls() const { return captured_ ? captured_->linear.nsrc() : 0; }

void TinyJit::add_linear(const UOp& linear, const std::map<std::string, pyint>&) { linears_.push_back(linear); }

std::vector<Tensor> TinyJit::operator()(const std::vector<Tensor>& inputs, const std::map<std::string, pyint>& vv) {
  // _prepare_jit_inputs
  std::vector<Tensor> unrealized;
  for (size_t i = 0; i < inputs.size(); i++) {
    if (uop_is_virtual(inputs[i].uop()))
      throw JitError("JIT input " + std::to_string(i) +
                     " is not a real buffer (a constant or a view of one); use .clone()");
    if (!uop_is_realized(inputs[i].uop())) unrealized.push_back(inputs[i]);
  }
  if (!unrealized.empty()) Tensor::realize_all(unrealized);
  std::vector<UOp> input_uops, input_bufs;
  for (const Tensor& t : inputs) input_uops.push_back(t.uop());
  for (const UOp& u : input_uops)
    if (uop_realized(u.base())) input_bufs.push_back(u.base());
  for (size_t i = 0; i < input_bufs.size(); i++)
    for (size_t j = 0; j < i; j++)
      if (input_bufs[i] == input_bufs[j])
        throw JitError("duplicate inputs to JIT: inputs " + std::to_string(j) + " and " + std::to_string(i) +
                       " are the same buffer");
  std::map<std::string, pyint> var_vals = vv;
  std::vector<InputInfo> info;
  for (const UOp& u : input_uops) {
    UOp view = u.substitute({{u.base(), UOp(Ops::NOOP)}}, nullptr, false, false, &mop_cleanup());
    auto [unbound, vals] = unbind_all(view);
    InputInfo in{unbound, {}, u.dtype(), device_name(u), u.shape_opt() ? shape_str(*u.shape_opt()) : "None"};
    for (auto& [k, v] : vals) in.vars.push_back(k), var_vals[k] = v;
    info.push_back(std::move(in));
  }

  std::vector<Tensor> ret;
  if (!JIT.value() || cnt_ == 0) {
    ret = fn_(inputs);
    if (!ret.empty()) Tensor::realize_all(ret);
  } else if (cnt_ == 1) {
    if (!capturing().empty()) throw JitError("having TinyJit inside another TinyJit is not supported");
    linears_.clear();
    capturing().push_back(this);
    try {
      ret = fn_(inputs);
      if (!ret.empty()) Tensor::realize_all(ret);
    } catch (...) {
      capturing().clear();
      linears_.clear();
      throw;
    }
    capturing().clear();
    if (linears_.empty()) throw JitError("didn't JIT anything!");
    if (DEBUG >= 1) std::printf("JIT captured %zu linears with %zu inputs\n", linears_.size(), input_bufs.size());
    std::vector<UOp> all;
    for (const UOp& l : linears_)
      for (const UOp& s : l.src()) all.push_back(s);
    linears_.clear();
    UOp big(Ops::LINEAR, DType(), all);
    if (prune_) {
      auto [kept, onetime] = prune_linear(big, UOpSet(input_bufs.begin(), input_bufs.end()));
      if (DEBUG >= 1) std::printf("pruned from %zu -> %zu kernels\n", big.nsrc(), kept.nsrc());
      run_linear(onetime, VarVals(var_vals.begin(), var_vals.end()));
      big = kept;
    }
    // buffers the memory planner must not share: those with a Buffer already and those live Tensors reach
    UOpSet held;
    for (const UOp& u : big.toposort())
      if (u.op() == Ops::BUFFER && uop_buffer_get(u)) held.insert(u);
    for (const Tensor& t : Tensor::live_tensors())
      for (const UOp& u : t.uop().toposort())
        if (u.op() == Ops::BUFFER) held.insert(u);
    UOp linear;
    {
      // jit_lower: one trace context "JIT N calls"
      track::Group group("jit_lower");
      group.rename("JIT " + pluralize("call", big.nsrc()));
      if (VIZ.value()) graph_rewrite(big, PatternMatcher("empty", {}), {.name = "View captured linear"});
      std::vector<std::pair<UOp, UOp>> params;
      for (size_t i = 0; i < input_bufs.size(); i++) {
        const UOp& u = input_bufs[i];
        params.emplace_back(u, UOp::param((int64_t)i, u.dtype(), u.shape_opt(), u.device()));
      }
      linear = params.empty() ? big : big.substitute(params, nullptr, true);
      linear = memory_plan_rewrite(linear, held);
      linear = compile_linear(linear, getenv_int("JITBEAM", BEAM.value()));
      if (VIZ.value()) graph_rewrite(linear, PatternMatcher("empty", {}), {.name = "View graphed linear"});
    }
    captured_ = std::make_unique<Captured>();
    captured_->ret = ret;
    captured_->linear = linear;
    captured_->expected = info;
    // _written_uops: input BUFFERs a call stores to without reading them first
    for (const UOp& call : linear.toposort()) {
      if (call.op() != Ops::CALL) continue;
      std::vector<UOp> args = get_call_arg_uops(call);
      auto [outs, ins] = get_call_outs_ins(call);
      std::set<int64_t> in_set(ins.begin(), ins.end());
      for (int64_t k : outs) {
        if (in_set.count(k) || k >= (int64_t)args.size()) continue;
        UOp b = args[k];
        if (auto cv = contiguous_view(b)) b = cv->first;
        if (b.op() == Ops::BUFFER) captured_->written.insert(b);
      }
    }
    ret = captured_->run(input_bufs, var_vals);
  } else {
    if (!captured_) throw JitError("TinyJit: nothing captured");
    const auto& exp = captured_->expected;
    if (exp.size() != info.size())
      throw JitError("args mismatch in JIT: captured with " + std::to_string(exp.size()) +
                     " tensor inputs, called with " + std::to_string(info.size()));
    for (size_t i = 0; i < info.size(); i++)
      if (!(exp[i] == info[i])) {
        std::string why =
            exp[i].shape != info[i].shape     ? "shape " + exp[i].shape + " != " + info[i].shape
            : exp[i].dtype != info[i].dtype   ? "dtype " + exp[i].dtype.repr() + " != " + info[i].dtype.repr()
            : exp[i].device != info[i].device ? "device " + exp[i].device + " != " + info[i].device
            : exp[i].vars != info[i].vars     ? std::string("bound variables differ")
                                          : "view/shape " + view_text(exp[i].view) + " != " + view_text(info[i].view);
        throw JitError("args mismatch in JIT: input " + std::to_string(i) + ": " + why);
      }
    ret = captured_->run(input_bufs, var_vals);
  }
  cnt_++;
  return ret;
}

}  // namespace tg
