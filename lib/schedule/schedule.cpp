#include "lib/schedule/schedule.h"

#include <chrono>
#include <cstdio>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "lib/codegen/simplify.h"
#include "lib/engine/counters.h"
#include "lib/helpers.h"
#include "lib/schedule/helpers.h"
#include "lib/schedule/memory.h"
#include "lib/schedule/rangeify.h"
#include "lib/uop/kernel_info.h"
#include "lib/uop/spec.h"
#include "lib/uop/symbolic.h"
#include "lib/uop/track.h"

namespace tg {

ContextVar SCACHE("SCACHE", 1, 0, 1), CAPTURING("CAPTURING", 1, 0, 1);

std::vector<LinearCapturer*>& capturing() {
  static auto* c = new std::vector<LinearCapturer*>();
  return *c;
}

// ***** schedule linearizer *****

// unwrap VIEW/CAST/etc to find the actual data source (kernel output, buffer, or multi-device op)
static UOp unwrap_src(UOp s) {
  while (s.nsrc() && s.op() != Ops::AFTER && s.op() != Ops::BUFFER && s.op() != Ops::PARAM && s.op() != Ops::MSELECT &&
         s.op() != Ops::MSTACK)
    s = s.src(0);
  return s;
}

// a buffer state is AFTER | BUFFER | PARAM. MSELECT/MSTACK join per-device states
static void states(const UOp& s0, std::vector<UOp>& out) {
  UOp s = unwrap_src(s0);
  if (s.op() == Ops::MSELECT || s.op() == Ops::MSTACK) {
    for (const UOp& ss : s.src()) states(ss, out);
    return;
  }
  if (s.op() != Ops::AFTER && s.op() != Ops::BUFFER && s.op() != Ops::PARAM)
    throw Error(std::string("input to kernel must resolve to a buffer state, not ") + op_repr(s.op()));
  out.push_back(s);
}

static std::pair<std::vector<UOp>, std::vector<UOp>> split_after(const UOp& after) {
  std::vector<UOp> kernels, deps;
  for (size_t i = 1; i < after.nsrc(); i++) {
    const UOp& s = after.src(i);
    if (s.op() == Ops::CALL || s.op() == Ops::END)
      kernels.push_back(s);
    else if (s.op() == Ops::AFTER)
      deps.push_back(s);
    else if (s.op() != Ops::STORE)
      throw Error(std::string("AFTER source should be CALL, END, STORE, or AFTER, not ") + op_repr(s.op()));
  }
  return {kernels, deps};
}

static bool gate_kernel_sink(const UOp& x) {
  if (x.op() == Ops::LINEAR) return false;
  if (x.op() == Ops::SINK && x.arg().as<KernelInfo>()) return false;
  return true;
}

static bool has(const std::vector<UOp>& v, const UOp& u) { return std::find(v.begin(), v.end(), u) != v.end(); }

UOp create_schedule(const UOp& sched_sink) {
  // build kernel dependency graph: edges from producer kernel to consumer kernels
  UOpMap<std::vector<UOp>> children;
  std::vector<UOp> in_order;  // in_degree's insertion order
  UOpMap<int64_t> in_degree;
  struct Write {
    UOp after, prev_state;
    std::vector<UOp> kernels;
  };
  UOpMap<std::vector<Write>> writes;
  struct Read {
    UOp after, kernel, state;
  };
  std::vector<Read> reads;
  for (const UOp& u : sched_sink.toposort(gate_kernel_sink)) {
    if (u.op() != Ops::AFTER) continue;
    auto [kernels, after_deps] = split_after(u);
    UOp prev_state = unwrap_src(u.src(0));
    std::vector<UOp> prev_kernels;
    if (prev_state.op() == Ops::AFTER) prev_kernels = split_after(prev_state).first;
    std::vector<UOp> new_kernels;
    for (const UOp& k : kernels)
      if (!has(prev_kernels, k)) new_kernels.push_back(k);
    writes[buf_uop(u)].push_back({u, prev_state, new_kernels});
    for (const UOp& k : kernels) {
      if (!in_degree.count(k)) in_degree[k] = 0, in_order.push_back(k);
      if (k.op() == Ops::END && k.src(0).op() != Ops::CALL)
        throw Error(std::string("END src[0] should be KERNEL, not ") + op_repr(k.src(0).op()));
      const UOp& kc = k.op() == Ops::END ? k.src(0) : k;
      std::vector<UOp> read_states;
      for (size_t i = 1; i < kc.nsrc(); i++) states(kc.src(i), read_states);
      for (const UOp& st : read_states) reads.push_back({u, k, st});
      // RAW deps: a kernel runs after the kernels that produced the states it reads or joins
      std::vector<UOp> all = read_states;
      for (const UOp& s : after_deps) states(s, all);
      for (const UOp& st : all) {
        if (st.op() != Ops::AFTER) continue;
        for (const UOp& t : split_after(st).first) {
          children[t].push_back(k);
          in_degree[k] += 1;
        }
      }
    }
  }
  // WAR deps: a kernel reading buffer state S must run before another write that supersedes S
  for (const Read& r : reads) {
    auto it = writes.find(buf_uop(r.state));
    if (it == writes.end()) continue;
    for (const Write& w : it->second) {
      if (w.after == r.after || !(w.prev_state == r.state)) continue;
      for (const UOp& t : w.kernels) {
        if (t == r.kernel || r.kernel.in_backward_slice_with_self(t)) continue;
        children[r.kernel].push_back(t);
        in_degree[t] += 1;
      }
    }
  }

  // linearize
  std::deque<UOp> queue;
  for (const UOp& k : in_order)
    if (in_degree[k] == 0) queue.push_back(k);
  std::vector<UOp> linearized;
  while (!queue.empty()) {
    UOp rk = queue.front();
    queue.pop_front();
    if (rk.op() == Ops::LINEAR) {
      linearized.insert(linearized.end(), rk.src().begin(), rk.src().end());
    } else {
      const UOp& k = rk.op() == Ops::END ? rk.src(0) : rk;
      if (k.op() != Ops::CALL) throw Error(std::string("unexpected op in queue: ") + op_repr(k.op()));
      std::vector<UOp> bufs;
      for (size_t i = 1; i < k.nsrc(); i++)
        if (!k.src(i).is_bound_var()) bufs.push_back(buf_uop(unwrap_src(k.src(i))));
      linearized.push_back(make_call(k.src(0), bufs));
    }
    if (auto it = children.find(rk); it != children.end())
      for (const UOp& x : it->second)
        if (--in_degree[x] == 0) queue.push_back(x);
  }
  for (const auto& [k, v] : in_degree)
    if (v) throw Error("cycle detected in assign graph");
  return UOp(Ops::LINEAR, DType(), linearized);
}

// ***** resolve the LINEAR call *****

static bool is_global_buffer(const UOp& b) { return b.param_arg() && addrspace(b) == AddrSpace::GLOBAL; }

const PatternMatcher& pm_post_sched_cache() {
  static const PatternMatcher pm(
      "pm_post_sched_cache",
      {
          // only resolve buffer PARAMs (slot>=0); ALU/shape vars use slot=-1 and must not be swapped for call args
          TG_RULE(UPat(Ops::PARAM).named("x"),
                  [](PostSchedCtx& ctx, U x) {
                    int64_t slot = x.param_arg()->slot;
                    if (slot < 0) return UOp();
                    if ((size_t)slot >= ctx.second.size())
                      throw Error("PARAM slot " + std::to_string(slot) + " has no argument in the LINEAR call");
                    return ctx.second[(size_t)slot];
                  }),
          // create new BUFFERs
          TG_RULE(UPat(Ops::BUFFER).src(UPat()).named("b"),
                  [](PostSchedCtx& ctx, U b) {
                    if (!is_global_buffer(b)) return UOp();
                    auto it = ctx.first.find(b);
                    if (it != ctx.first.end()) return it->second;
                    UOp nb = UOp::new_buffer(b.device(), max_numel(b), b.dtype());
                    ctx.first[b] = nb;
                    return nb;
                  }),
      });
  return pm;
}

const PatternMatcher& pm_flatten_linear() {
  static const PatternMatcher pm("pm_flatten_linear",
                                 {
                                     TG_RULE(UPat(Ops::LINEAR).early_reject(OpSet{Ops::LINEAR}).named("lin"),
                                             [](U lin) {
                                               std::vector<UOp> s;
                                               for (const UOp& c : lin.src()) {
                                                 if (c.op() == Ops::LINEAR)
                                                   s.insert(s.end(), c.src().begin(), c.src().end());
                                                 else
                                                   s.push_back(c);
                                               }
                                               return lin.with_src(s);
                                             }),
                                 });
  return pm;
}

using Binds = std::vector<std::pair<std::string, UOp>>;

static UOp resolve_linear_call(const UOp& linear_call, const Binds& outer_binds) {
  PostSchedCtx ctx;
  ctx.second.assign(linear_call.src().begin() + 1, linear_call.src().end());
  UOp linear = graph_rewrite(linear_call.src(0), pm_post_sched_cache(),
                             {.ctx = &ctx, .name = "params to buffers", .walk = true});
  // nested LINEAR calls are lexical scopes: their positional params shadow the enclosing scope
  Binds binds = outer_binds;
  auto set_bind = [&](const std::string& k, const UOp& v) {
    for (auto& [a, b] : binds)
      if (a == k) {
        b = v;
        return;
      }
    binds.emplace_back(k, v);
  };
  for (size_t i = 1; i < linear_call.nsrc(); i++) {
    const UOp& x = linear_call.src(i);
    if (x.is_bound_var()) set_bind("p" + std::to_string(i - 1), x.src(0).replace(Ops::PARAM));
  }
  std::vector<UOp> out;
  for (const UOp& si : linear.src()) {
    if (si.op() == Ops::CALL && si.src(0).op() == Ops::LINEAR) {
      out.push_back(resolve_linear_call(si, binds));
      continue;
    }
    std::vector<std::pair<UOp, UOp>> subs;
    for (const UOp& v : si.variables())
      for (const auto& [k, b] : binds)
        if (k == v.expr()) subs.emplace_back(v, b);
    std::vector<UOp> ns;
    for (const UOp& s : si.src()) ns.push_back(s.substitute(subs, "resolve scalar params"));
    out.push_back(si.with_src(ns));
  }
  return linear.with_src(out);
}

const PatternMatcher& pm_resolve_linear_call() {
  static const PatternMatcher pm =
      PatternMatcher("pm_resolve_linear_call",
                     {
                         // call LINEAR is resolved here
                         TG_RULE(UPat(Ops::CALL).src(UPat(Ops::LINEAR)).named("linear_call").any_len(),
                                 [](U linear_call) { return resolve_linear_call(linear_call, {}); }),
                     }) +
      pm_flatten_linear();
  return pm;
}

// ***** the schedule cache and pm_schedule *****

static std::mutex g_cache_mu;
// never destroyed: UOps must not be released after the intern table is gone at exit
static auto& g_schedule_cache = *new std::unordered_map<std::string, UOp>();

static UOp lower_sink_to_linear(const UOp& function) {
  auto st = std::chrono::steady_clock::now();
  if (function.arg().as<KernelInfo>()) return UOp();
  // the key serves the cache and the DEBUG line only (a structural hash of the whole graph: ~4% of a schedule)
  const bool use_cache = SCACHE.value() != 0;
  std::string cache_key = use_cache || DEBUG >= 1 ? uop_key(function) : std::string();
  UOp linear;
  bool hit = false;
  if (use_cache) {
    std::lock_guard<std::mutex> lk(g_cache_mu);
    if (auto it = g_schedule_cache.find(cache_key); it != g_schedule_cache.end()) linear = it->second, hit = true;
  }
  if (!hit) {
    if (SPEC) type_verify(function, spec_tensor());
    // support recursive CALLs
    linear = create_schedule(get_kernel_graph(function));
    if (use_cache) {
      std::lock_guard<std::mutex> lk(g_cache_mu);
      g_schedule_cache[cache_key] = linear;
    }
  }
  if ((DEBUG >= 1 && linear.nsrc() > 1) || DEBUG >= 3) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - st).count();
    std::printf("scheduled %5zu kernels in %8.2f ms | %s %s | %7zu uops in cache\n", linear.nsrc(), ms,
                use_cache && hit ? " cache hit" : "CACHE MISS", cache_key.substr(0, 8).c_str(), live_uop_count());
  }
  return linear;
}

const PatternMatcher& pm_schedule() {
  static const PatternMatcher pm("pm_schedule", {
                                                    TG_RULE(UPat(Ops::SINK).named("function"),
                                                            [](U function) { return lower_sink_to_linear(function); }),
                                                });
  return pm;
}

// ***** copies *****

static bool is_disk(const Arg& d) { return d.is_str() && d.as_str().rfind("DISK", 0) == 0; }

static UOp copy_kernel_to_copy_uop(const UOp& call, const UOp& dst, const UOp& src) {
  Arg dd = dst.device(), sd = src.device();
  if (dd.py_eq(sd) && !is_disk(dd)) return UOp();
  std::vector<UOp> s{UOp(Ops::COPY, DType(), {src}, dd)};
  s.insert(s.end(), call.src().begin() + 1, call.src().end());
  return call.with_src(s);
}

static UOp simplify_copy_kernel(const UOp& call, const UOp& ast, const UOp& dst, const UOp& src) {
  // NOTE: this is a codegen for SDMA devices
  Arg dd = dst.device(), sd = src.device();
  if (dd.py_eq(sd) && !is_disk(dd)) return UOp();
  static const PatternMatcher pm = sym() + pm_mops() + pm_flatten_range() + pm_simplify_ranges();
  UOpDict<UOp> ctx;
  UOp sink = graph_rewrite(ast, pm, {.ctx = &ctx, .name = "simplify ranges in copy"});
  std::vector<UOp> s{sink};
  s.insert(s.end(), call.src().begin() + 1, call.src().end());
  return call.with_src(s);
}

const PatternMatcher& pm_copy_from_store() {
  static const PatternMatcher pm(
      "pm_copy_from_store",
      {
          // simplify copy kernels
          TG_RULE(UPat(Ops::CALL).src(UPat(Ops::SINK).named("ast"), UPat::var("dst"), UPat::var("src")).named("call"),
                  [](U call, U ast, U dst, U src) { return simplify_copy_kernel(call, ast, dst, src); }),
          // replace this with a copy if it's a copy
          TG_RULE(UPat(Ops::CALL)
                      .src(UPat::sink(UPat(Ops::PARAM)
                                          .named("dst")
                                          .index(UPat(Ops::CONST).arg(Arg(0)))
                                          .store(UPat(Ops::PARAM).named("src").index(UPat(Ops::CONST).arg(Arg(0))))))
                      .named("call")
                      .any_len(),
                  [](U call, U dst, U src) { return copy_kernel_to_copy_uop(call, dst, src); }),
          TG_RULE(UPat(Ops::CALL)
                      .src(UPat::sink(UPat(Ops::PARAM)
                                          .named("dst")
                                          .index(UPat(Ops::RANGE).named("r"))
                                          .store(UPat(Ops::PARAM).named("src").index(UPat(Ops::RANGE).named("r")))
                                          .end(UPat(Ops::RANGE).named("r"))))
                      .named("call")
                      .any_len(),
                  [](U call, U dst, U src, U r) { return copy_kernel_to_copy_uop(call, dst, src); }),
          // if it wasn't copy, it currently can't be cross device
          TG_RULE(UPat(Ops::CALL).src(UPat(Ops::SINK).named("ast")).any_len(),
                  [](U ast) -> UOp {
                    std::vector<Arg> devices;
                    for (const UOp& x : ast.toposort()) {
                      if (x.op() != Ops::PARAM || x.device().is_none()) continue;
                      bool seen = false;
                      for (const Arg& d : devices) seen = seen || d.py_eq(x.device());
                      if (!seen) devices.push_back(x.device());
                    }
                    if (devices.size() >= 2) {
                      std::string s;
                      for (const Arg& d : devices) s += (s.empty() ? "" : ", ") + d.repr();
                      throw Error("all buffers must be on the same device: [" + s + "]");
                    }
                    return UOp();
                  }),
      });
  return pm;
}

static std::string pluralize(const std::string& st, size_t cnt) {
  return std::to_string(cnt) + " " + st + (cnt == 1 ? "" : "s");
}

LinearWithVars create_linear_with_vars(const UOp& big_sink) {
  ScopedSeconds timed(CompileCounters::schedule_s);
  track::Group group("create_linear_with_vars");
  SymbolicMemo memo;  // the valid and where-closure rules' results for this schedule (when nothing is counted)
  // big_sink srcs are all the Tensors
  UOp linear_call = graph_rewrite(big_sink, pm_schedule(), {.name = "schedule to linear", .enter_calls = true});
  // this recursively resolves the linear_call and allocates buffers
  UOp linear = graph_rewrite(linear_call, pm_resolve_linear_call(), {.name = "resolve linear call"});
  // create copies
  linear = graph_rewrite(linear, pm_copy_from_store(), {.name = "create COPY kernels for SDMA"});

  // vars used in the schedule
  std::vector<std::string> used_vars;
  for (const UOp& si : linear.src())
    for (const UOp& v : si.src(0).variables()) used_vars.push_back(v.expr());
  // get var_vals from the bound Variables in the call args
  LinearWithVars ret;
  for (size_t i = 1; i < big_sink.nsrc(); i++) {
    const UOp& b = big_sink.src(i);
    if (!b.is_bound_var()) continue;
    auto [v, val] = b.unbind();
    std::string nm = v.expr();
    if (std::find(used_vars.begin(), used_vars.end(), nm) == used_vars.end()) continue;
    if (auto it = ret.var_vals.find(nm); it != ret.var_vals.end() && it->second != val)
      throw Error("bind mismatch on " + nm + ", " + std::to_string((long long)it->second) +
                  " != " + std::to_string((long long)val));
    ret.var_vals[nm] = val;
  }
  // jit captures this schedule, no need to execute
  if (!capturing().empty() && CAPTURING) {
    capturing()[0]->add_linear(linear, ret.var_vals);
    ret.linear = UOp(Ops::LINEAR, DType(), std::vector<UOp>{});
    group.rename("Schedule " + pluralize("Kernel", 0));
    return ret;
  }
  UOpSet held_bufs;
  if (linear_call.op() == Ops::CALL)
    for (size_t i = 1; i < linear_call.nsrc(); i++)
      if (linear_call.src(i).op() == Ops::BUFFER) held_bufs.insert(linear_call.src(i));
  ret.linear = memory_plan_rewrite(linear, held_bufs);
  group.rename("Schedule " + pluralize("Kernel", ret.linear.nsrc()));
  return ret;
}

}  // namespace tg
