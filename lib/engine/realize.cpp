// Port of tinygrad/engine/realize.py (see realize.h).
#include "lib/engine/realize.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "lib/codegen/codegen.h"
#include "lib/codegen/late/program.h"
#include "lib/codegen/opt/opt.h"
#include "lib/engine/counters.h"
#include "lib/recorder.h"
#include "lib/uop/kernel_info.h"
#include "lib/uop/rewrite.h"
#include "lib/uop/track.h"

namespace tg {

namespace {
int64_t noopt_value() {
  ContextVar* v = ContextVar::find("NOOPT");
  return v ? v->value() : 0;
}
// the codegen settings a cached program was made with besides its AST (NOOPT, LOOP_ORDER, CPU_TILE), as one key
int64_t codegen_flags() {
  ContextVar* lo = ContextVar::find("LOOP_ORDER");
  ContextVar* tile = ContextVar::find("CPU_TILE");
  return noopt_value() * 2 + (lo && lo->value() ? 1 : 0) + (tile && tile->value() ? 4 : 0);
}

std::unordered_map<std::string, pyint> to_umap(const VarVals& v) { return {v.begin(), v.end()}; }

pyint infer(const sint& s, const VarVals& var_vals) {
  if (s.is_int()) return s.i();
  PyConst r = s.u().sym_infer(to_umap(var_vals));
  return r.is_int() ? r.as_int() : (pyint)r.as_float();
}

std::string first_device(const Arg& d) {
  if (d.is_str()) return d.as_str();
  if (d.is_tuple() && d.size()) return d[0].as_str();
  return "";
}

// the estimates of compiled programs (do_estimates is not part of C++ pm_to_program), by PROGRAM
std::mutex est_mu;
UOpMap<Estimates>& est_cache() {
  static auto* m = new UOpMap<Estimates>();
  return *m;
}

struct ProgramKey {
  UOp ast;
  const Renderer* ren;
  int64_t flags;  // codegen_flags()
  bool operator==(const ProgramKey& o) const { return ast == o.ast && ren == o.ren && flags == o.flags; }
};
struct ProgramKeyHash {
  size_t operator()(const ProgramKey& k) const {
    return k.ast.ptr_hash() ^ (std::hash<const void*>()(k.ren) * 31) ^ (size_t)k.flags;
  }
};
std::mutex prg_mu;
std::unordered_map<ProgramKey, UOp, ProgramKeyHash>& to_program_cache() {
  static auto* m = new std::unordered_map<ProgramKey, UOp, ProgramKeyHash>();
  return *m;
}
std::unordered_set<size_t>& first_run_cache() {
  static auto* s = new std::unordered_set<size_t>();
  return *s;
}

// do_to_program plus what pm_to_program does after rendering in the reference: estimates, DEBUG prints
// private: codegen on this thread's private nodes (a worker of a parallel lowering: it then shares no node with the
// other workers, see PrivateNodes), the program handed out at the end
UOp compile_one(const UOp& ast, const Renderer& ren, bool private_nodes = false) {
  if (DEBUG >= 5) std::printf("%s\n", ast.repr().c_str());
  UOp prg;
  {
    ScopedSeconds timed(CompileCounters::codegen_s);
    prg = private_nodes ? to_program_private(ast, ren) : to_program(ast, ren);
  }
  CompileCounters::programs++;
  const KernelInfo* ki = prg.src(0).arg().as<KernelInfo>();
  if (DEBUG >= 3 && ki && ki->applied_opts.is_tuple() && ki->applied_opts.size())
    std::printf("%-25s opts: %s\n", ki->function_name().c_str(), ki->applied_opts.repr().c_str());
  if (DEBUG >= 4 && prg.nsrc() > 2) std::printf("%s\n", prg.src(2).arg().as_str().c_str());
  if (prg.nsrc() > 1 && prg.src(1).op() == Ops::LINEAR) {
    std::vector<UOp> lin(prg.src(1).src().begin(), prg.src(1).src().end());
    // the linearized UOps (print_uops; the reference prints them only in its spec check at DEBUG>=3 with SPEC)
    if (DEBUG >= 6) std::printf("%s", format_uops(lin).c_str());
    std::lock_guard<std::mutex> lk(est_mu);
    est_cache()[prg] = Estimates::from_uops(lin, true);
  }
  return prg;
}
}  // namespace

std::vector<UOp> get_call_arg_uops(const UOp& call) {
  std::vector<UOp> out;
  for (size_t i = 1; i < call.nsrc(); i++)
    if (!call.src(i).is_bound_var()) out.push_back(call.src(i));
  return out;
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> get_call_outs_ins(const UOp& call) {
  const UOp& ast = call.src(0);
  if (ast.op() == Ops::PROGRAM)
    if (const ProgramInfo* pi = ast.arg().as<ProgramInfo>()) return {pi->outs, pi->ins};
  if (ast.op() == Ops::COPY) return {{0}, {1}};
  return {};
}

std::string get_call_name(const UOp& call, const std::vector<std::shared_ptr<Buffer>>& bufs, const VarVals& var_vals) {
  const UOp& ast = call.src(0);
  if (ast.op() == Ops::PROGRAM) return ast.arg().as<ProgramInfo>()->name;
  if (ast.op() == Ops::COPY) {
    std::vector<UOp> args = get_call_arg_uops(call);
    sint n = args.at(0).numel();
    pyint sz = infer(n, var_vals) * args[0].dtype().itemsize();
    auto dev = [&](size_t i) {
      std::string d = i < bufs.size() && bufs[i] ? bufs[i]->device : first_device(args.at(i).device());
      return d.substr(0, 7);
    };
    char buf[160];
    std::snprintf(buf, sizeof(buf), "copy %10s, %7s <- %-7s", size_to_str(sz).c_str(), dev(0).c_str(), dev(1).c_str());
    return colored(buf, "yellow");
  }
  throw Error(std::string("get_call_name is not implemented for a CALL of ") + op_name(ast.op()));
}

Estimates estimate_uop(const UOp& call) {
  const UOp& ast = call.src(0);
  if (ast.op() == Ops::PROGRAM) {
    std::lock_guard<std::mutex> lk(est_mu);
    auto it = est_cache().find(ast);
    return it == est_cache().end() ? Estimates{} : it->second;
  }
  if (ast.op() == Ops::COPY) {
    const UOp& a = call.src(1);
    sint n = a.numel();
    sint nbytes = n.is_int() ? sint(n.i() * a.dtype().itemsize()) : sint(n.u().mul((pyint)a.dtype().itemsize()));
    Estimates e;
    e.lds = nbytes, e.mem = nbytes;
    return e;
  }
  return {};
}

std::vector<UOp> resolve_params(const UOp& call, const std::vector<UOp>& inputs) {
  auto slot_of = [&](const UOp& p) -> const UOp& {
    int64_t s = p.param_arg()->slot;
    if (s < 0 || (size_t)s >= inputs.size())
      throw Error("run_linear: PARAM slot " + std::to_string(s) + " has no input (" + std::to_string(inputs.size()) +
                  " input uops)");
    return inputs[(size_t)s];
  };
  std::vector<UOp> out;
  for (const UOp& b : get_call_arg_uops(call)) {
    if ((b.op() == Ops::MSELECT || b.op() == Ops::SHRINK) && b.src(0).op() == Ops::PARAM) {
      std::vector<UOp> src(b.src().begin(), b.src().end());
      src[0] = slot_of(b.src(0));
      out.push_back(b.with_src(src));
    } else if (b.op() == Ops::PARAM) {
      out.push_back(slot_of(b));
    } else {
      out.push_back(b);
    }
  }
  return out;
}

// -1 (the default): NUM_CPU_THREADS, or 0 while recording; set, it is a worker count
ContextVar PARALLEL("PARALLEL", -1, 0, 256);

static int64_t parallel_workers() {
  // helpers.PARALLEL: NUM_CPU_THREADS when nothing is recorded (the reference disables it under VIZ)
  int64_t p = PARALLEL.value();
  if (p < 0) p = VIZ.value() != 0 || TRACK_MATCH_STATS.value() >= 2 ? 0 : NUM_CPU_THREADS.value();
  return p;
}

// The machine code of a recorded program, once per trace: what the device's compiler reads out of the library it
// built (the CPU disassembles its object). Nothing happens when no trace is recorded, or the program was not recorded.
// lib: the compiled library, nullptr to take it from the compiler's cache.
static void record_machine_code(const UOp& prg, const std::string& dev, const std::vector<uint8_t>* lib) {
  Recorder* r = profile_recorder();
  if (!r) return;
  uint64_t id = recorded_program_id(prg);
  if (!id || !track::claim_machine_code(prg)) return;
  std::optional<MachineCode> mc;
  try {
    Compiler& c = get_device(dev).compiler();
    std::shared_ptr<const std::vector<uint8_t>> cached;
    if (!lib) lib = (cached = c.compile_cached(prg.src(2).arg().as_str())).get();
    mc = c.machine_code(*lib);
  } catch (const std::exception& e) {  // the kernel still runs; the trace says why it has no machine code
    mc = MachineCode{std::string("no machine code: reading the compiled kernel failed: ") + e.what(), ""};
  }
  if (mc) r->program_code(id, *mc);
}

UOp lower_and_compile(const UOp& linear) {
  // the calls to lower and compile: a SINK body (a PROGRAM body is compiled already: its runtime is loaded on use)
  struct Todo {
    UOp call;
    std::string dev;
    const Renderer* ren;
    ProgramKey key;
    UOp prg;
  };
  std::vector<Todo> todo;
  UOpSet seen;
  for (const UOp& c : linear.toposort()) {
    if (c.op() != Ops::CALL || c.src(0).op() != Ops::SINK || !seen.insert(c).second) continue;
    std::string dev = first_device(c.device());
    if (dev.empty()) throw Error("compile_linear: a kernel CALL without a device");
    const Renderer& ren = get_device(dev).renderer();
    ProgramKey key{c.src(0), &ren, codegen_flags()};
    UOp prg;
    {
      std::lock_guard<std::mutex> lk(prg_mu);
      auto it = to_program_cache().find(key);
      if (it != to_program_cache().end()) prg = it->second;
    }
    todo.push_back({c, dev, &ren, key, prg});
  }
  if (todo.empty()) return linear;
  // lower (codegen) and compile what is not cached; in parallel on PARALLEL worker threads when there are several
  // kernels, none runs BEAM (it times candidates on the device) and DEBUG does not print per kernel
  std::vector<size_t> work;
  for (size_t i = 0; i < todo.size(); i++) {
    if (todo[i].prg) continue;
    bool dup = false;
    for (size_t j : work) dup |= todo[j].key == todo[i].key;
    if (!dup) work.push_back(i);
  }
  bool any_beam = false;
  for (size_t i : work)
    if (const KernelInfo* ki = todo[i].key.ast.arg().as<KernelInfo>(); ki && ki->beam) any_beam = true;
  const int64_t nworkers = any_beam || DEBUG.value() >= 3
                               ? 1
                               : std::max<int64_t>(1, std::min<int64_t>(parallel_workers(), (int64_t)work.size()));
  // two phases, each on the workers: codegen of every kernel, then the compiles (the biggest sources first, so the
  // last compiles to finish are short ones). Their wall times are what the first step waits for.
  double t0 = wall_seconds();
  static const bool shared_codegen = std::getenv("TG_SHARED_CODEGEN") != nullptr;
  const bool private_nodes = nworkers > 1 && !shared_codegen;
  parallel_for(work.size(), nworkers, [&](size_t w) {
    Todo& t = todo[work[w]];
    t.prg = compile_one(t.key.ast, *t.ren, private_nodes);
  });
  double t1 = wall_seconds();
  std::vector<size_t> by_size(work);
  std::stable_sort(by_size.begin(), by_size.end(), [&](size_t a, size_t b) {
    return todo[a].prg.src(2).arg().as_str().size() > todo[b].prg.src(2).arg().as_str().size();
  });
  parallel_for(by_size.size(), nworkers, [&](size_t w) {
    const Todo& t = todo[by_size[w]];
    std::shared_ptr<const std::vector<uint8_t>> lib;
    {
      ScopedSeconds timed(CompileCounters::compile_s);
      lib = get_device(t.dev).compiler().compile_cached(t.prg.src(2).arg().as_str());
    }
    record_machine_code(t.prg, t.dev, lib.get());
  });
  CompileCounters::codegen_wall_s += t1 - t0;
  CompileCounters::compile_wall_s += wall_seconds() - t1;
  if (nworkers > CompileCounters::threads) CompileCounters::threads = nworkers;  // the widest lowering of the step
  for (size_t i : work) {
    std::lock_guard<std::mutex> lk(prg_mu);
    to_program_cache().emplace(todo[i].key, todo[i].prg);
  }
  std::vector<std::pair<UOp, UOp>> subs;
  for (Todo& t : todo) {
    if (!t.prg) {
      std::lock_guard<std::mutex> lk(prg_mu);
      t.prg = to_program_cache().at(t.key);
    }
    // do_compile: the program is compiled (and loaded) here, before anything runs, so a compile error leaves no
    // half-written buffers
    {
      ScopedSeconds timed(CompileCounters::compile_s);
      get_runtime(t.dev, t.prg);
    }
    record_program(t.prg, t.dev);
    record_machine_code(t.prg, t.dev, nullptr);  // a program recorded only now (its codegen was not recorded)
    std::vector<UOp> src(t.call.src().begin(), t.call.src().end());
    src[0] = t.prg;
    subs.emplace_back(t.call, t.call.with_src(src));
  }
  return linear.substitute(subs, "precompile kernels");
}

// pm_beam: every kernel CALL whose SINK has beam 0 gets the beam width (its codegen then runs the BEAM search)
UOp apply_beam(const UOp& linear, int64_t beam) {
  std::vector<std::pair<UOp, UOp>> subs;
  UOpSet seen;
  for (const UOp& c : linear.toposort()) {
    if (c.op() != Ops::CALL || c.src(0).op() != Ops::SINK || !seen.insert(c).second) continue;
    const KernelInfo* ki = c.src(0).arg().as<KernelInfo>();
    if (!ki || ki->beam != 0) continue;
    KernelInfo nk(*ki);
    nk.beam = beam;
    std::vector<UOp> src(c.src().begin(), c.src().end());
    src[0] = c.src(0).with_arg(nk.to_arg());
    subs.emplace_back(c, c.with_src(src));
  }
  return subs.empty() ? linear : linear.substitute(subs, "beam");
}

UOp compile_linear(const UOp& linear, std::optional<int64_t> beam) {
  int64_t beam_val = beam ? *beam : BEAM.value();
  return lower_and_compile(beam_val >= 1 ? apply_beam(linear, beam_val) : linear);
}

size_t to_program_cache_size() {
  std::lock_guard<std::mutex> lk(prg_mu);
  return to_program_cache().size();
}

LaunchArgs launch_args(const std::vector<pyint>& global_size, const std::optional<std::vector<pyint>>& local_size,
                       bool wait) {
  LaunchArgs a;
  for (size_t i = 0; i < 3 && i < global_size.size(); i++) a.global_size[i] = (int64_t)global_size[i];
  if (local_size) {
    a.local_size = std::array<int64_t, 3>{1, 1, 1};
    for (size_t i = 0; i < 3 && i < local_size->size(); i++) (*a.local_size)[i] = (int64_t)(*local_size)[i];
  } else {
    a.local_size = std::nullopt;
  }
  a.wait = wait;
  return a;
}

std::shared_ptr<Program> get_runtime(const std::string& device, const UOp& prg) {
  const ProgramInfo* pi = prg.arg().as<ProgramInfo>();
  if (!pi || prg.nsrc() < 3 || prg.src(2).op() != Ops::SOURCE) throw Error("get_runtime: the PROGRAM has no SOURCE");
  return get_device(device).compile(prg.src(2).arg().as_str(), pi->function_name());
}

namespace {
std::vector<std::optional<double>> exec_kernel(ExecContext& ctx, const UOp& call, const UOp& ast) {
  const ProgramInfo* pi = ast.arg().as<ProgramInfo>();
  std::vector<UOp> resolved = resolve_params(call, ctx.input_uops);
  std::string device = first_device(call.src(1).device());
  std::vector<void*> bufs;
  for (int64_t g : pi->globals) {
    if ((size_t)g >= resolved.size())
      throw Error("exec_kernel " + pi->name + ": no argument for buffer " + std::to_string(g));
    std::shared_ptr<Buffer> b = uop_buffer(resolved[(size_t)g]);
    b->ensure_allocated();
    bufs.push_back(b->opaque());
  }
  auto vv = to_umap(ctx.var_vals);
  std::shared_ptr<Program> rt = get_runtime(device, ast);
  auto [gs, ls] = pi->launch_dims(vv);
  std::vector<std::optional<pyint>> vals = pi->vals(vv);
  std::optional<double> et = (*rt)(bufs, vals, launch_args(gs, ls, ctx.wait));
  ctx.device_range = et ? rt->last_device_range() : std::nullopt;
  return {et};
}

std::vector<std::optional<double>> exec_copy(ExecContext& ctx, const UOp& call) {
  std::vector<UOp> resolved = resolve_params(call, ctx.input_uops);
  std::shared_ptr<Buffer> dest = uop_buffer(resolved.at(0)), src = uop_buffer(resolved.at(1));
  dest->ensure_allocated(), src->ensure_allocated();
  dest->copyin(src->as_bytes());
  ctx.device_range.reset();
  return {};
}

void track_stats(ExecContext& ctx, const UOp& call, int64_t st_ns, const std::vector<std::optional<double>>& ets) {
  Estimates est = estimate_uop(call);
  if (ctx.update_stats) {
    GlobalCounters::kernel_count += 1;
    GlobalCounters::global_ops += (int64_t)infer(est.ops, ctx.var_vals);
    GlobalCounters::global_mem += (int64_t)infer(est.mem, ctx.var_vals);
    for (const auto& e : ets)
      if (e) GlobalCounters::time_sum_s = GlobalCounters::time_sum_s + *e;
  }
  if (DEBUG < 2 || !ctx.update_stats) return;
  std::string device = first_device(call.src(1).device());
  std::optional<double> et = ets.empty() ? std::nullopt : ets[0];
  if (!et) {
    get_device(device).synchronize();
    et = (double)(now_ns() - st_ns) * 1e-9;
    GlobalCounters::time_sum_s = GlobalCounters::time_sum_s + *et;
  }
  std::vector<std::shared_ptr<Buffer>> bufs;
  std::vector<UOp> args = resolve_params(call, ctx.input_uops);
  if (call.src(0).op() == Ops::PROGRAM) {
    for (int64_t g : call.src(0).arg().as<ProgramInfo>()->globals) bufs.push_back(uop_buffer(args.at((size_t)g)));
  } else {
    for (const UOp& a : args) bufs.push_back(uop_buffer(a));
  }
  std::string display_name = get_call_name(call, bufs, ctx.var_vals);
  double op_est = (double)infer(est.ops, ctx.var_vals), mem_est = (double)infer(est.mem, ctx.var_vals),
         lds_est = (double)infer(est.lds, ctx.var_vals);
  size_t key = call.src(0).ptr_hash();
  std::string header_color = ctx.jit ? "magenta" : (first_run_cache().count(key) == 0 ? "green" : "");
  std::string ptm = colored(time_to_str(*et, 9), *et > 0.01 ? "yellow" : "");
  double t = *et > 0 ? *et : 1e-20;
  double flops = op_est / t, membw = mem_est / t, ldsbw = lds_est / t;
  char b1[64], b2[64], head[64], tail[128];
  std::string flops_str, mem_str;
  if (flops < 1e14)
    std::snprintf(b1, sizeof(b1), "%7.0f GFLOPS", flops * 1e-9), flops_str = b1;
  else
    std::snprintf(b1, sizeof(b1), "%7.0f TFLOPS", flops * 1e-12), flops_str = colored(b1, "green");
  if (membw < 1e13 && ldsbw < 1e15)
    std::snprintf(b2, sizeof(b2), "%4.0f|%-6.0f GB/s", membw * 1e-9, ldsbw * 1e-9), mem_str = b2;
  else
    std::snprintf(b2, sizeof(b2), "%4.0f|%-6.0f TB/s", membw * 1e-12, ldsbw * 1e-12), mem_str = colored(b2, "green");
  std::snprintf(head, sizeof(head), "*** %-7s %4lld", device.substr(0, 7).c_str(),
                (long long)GlobalCounters::kernel_count.load());
  std::snprintf(tail, sizeof(tail), " arg %2zu mem %6.2f GB", bufs.size(),
                (double)GlobalCounters::mem_used.load() / 1e9);
  char tm[96];
  std::snprintf(tm, sizeof(tm), "/%9.2fms (", GlobalCounters::time_sum_s.load() * 1e3);
  std::string line = colored(head, header_color) + " " + ansipad(display_name, 46) + tail + " tm " + ptm + tm +
                     flops_str + " " + mem_str + ")";
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  first_run_cache().insert(key);
}
// the trace's kernel event of one call (PROFILE or a recorded trace)
void record_kernel(Recorder& r, ExecContext& ctx, const UOp& call, int64_t st, int64_t en) {
  KernelEvent e;
  const UOp& ast = call.src(0);
  std::string device = first_device(call.src(1).device());
  std::vector<UOp> args = resolve_params(call, ctx.input_uops);
  std::vector<std::shared_ptr<Buffer>> bufs;
  auto [outs, ins] = get_call_outs_ins(call);
  for (const UOp& a : args) bufs.push_back(uop_buffer(a));
  e.name = ansistrip(get_call_name(call, bufs, ctx.var_vals));
  e.device = ast.op() == Ops::COPY ? device + ":COPY" : device;
  if (ast.op() == Ops::PROGRAM) e.program = recorded_program_id(ast);
  e.t_start_ns = st, e.t_end_ns = en;
  // a device that times its kernels (CL's profiling events, tied to the host clock when it opened) places them where
  // they ran, not where the host waited for them
  if (ast.op() == Ops::PROGRAM && ctx.device_range) std::tie(e.t_start_ns, e.t_end_ns) = *ctx.device_range;
  // the reference's exec event: each argument is dataN, read, written or both
  auto has = [](const std::vector<int64_t>& v, size_t i) {
    return std::find(v.begin(), v.end(), (int64_t)i) != v.end();
  };
  for (size_t i = 0; i < bufs.size(); i++) {
    bool w = has(outs, i), rd = has(ins, i);
    e.bufs.push_back(BufferUse{bufs[i]->base().trace_num, bufs[i]->nbytes(),
                               w && rd ? BufferUse::write_read
                               : w     ? BufferUse::write
                                       : BufferUse::read});
  }
  if (!ctx.var_vals.empty()) {
    std::string vv = "{";
    for (const auto& [k, v] : ctx.var_vals)
      vv += (vv.size() > 1 ? ", '" : "'") + k + "': " + std::to_string((long long)v);
    e.var_vals = vv + "}";
  }
  r.kernel_event(e);
  // a copy between two devices shows on both lanes (host data, PYTHON, has no lane of its own)
  if (ast.op() == Ops::COPY && bufs.size() >= 2) {
    std::string src = canonicalize_device(bufs[1]->device);
    if (src != canonicalize_device(device) && src != "PYTHON") {
      e.device = src + ":COPY";
      r.kernel_event(e);
    }
  }
}

}  // namespace

std::vector<std::optional<double>> exec_call(ExecContext& ctx, const UOp& call) {
  if (call.op() != Ops::CALL || call.nsrc() < 1) throw Error("run_linear: expected a CALL, got " + call.repr());
  const UOp& ast = call.src(0);
  if (ast.op() == Ops::COPY) return exec_copy(ctx, call);
  if (ast.op() == Ops::PROGRAM) return exec_kernel(ctx, call, ast);
  throw Error(std::string("run_linear: no exec rule for a CALL of ") + op_name(ast.op()));
}

void run_linear(const UOp& linear, const VarVals& var_vals, const std::vector<UOp>& input_uops, bool update_stats,
                bool jit, bool wait) {
  UOp lin = jit ? linear : compile_linear(linear);
  Recorder* rec = profile_recorder();
  ExecContext ctx{var_vals, input_uops, update_stats, jit, wait || DEBUG >= 2 || rec != nullptr, true};
  for (size_t i = 0; i < lin.nsrc(); i++) {
    const UOp& call = lin.src(i);
    int64_t st = now_ns();
    try {
      auto ets = exec_call(ctx, call);
      if (rec) record_kernel(*rec, ctx, call, st, now_ns());
      track_stats(ctx, call, st, ets);
    } catch (...) {
      // the outputs of this call and of every later one hold no result: free them, so reading them is an error
      // ("the tensor's buffer was never computed") instead of garbage
      for (size_t j = i; j < lin.nsrc(); j++) {
        const UOp& c = lin.src(j);
        std::vector<UOp> args;
        try {
          args = resolve_params(c, ctx.input_uops);
        } catch (...) {
          continue;
        }
        for (int64_t o : get_call_outs_ins(c).first) {
          if ((size_t)o >= args.size()) continue;
          std::shared_ptr<Buffer> b = uop_buffer_get(args[(size_t)o].base());
          if (b && b->is_initialized() && !b->is_view()) b->deallocate();
        }
      }
      throw;
    }
  }
}

}  // namespace tg
