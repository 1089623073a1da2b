#include "lib/codegen/opt/search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "lib/codegen/codegen.h"
#include "lib/codegen/late/program.h"
#include "lib/codegen/opt/heuristic.h"
#include "lib/device.h"
#include "lib/diskcache.h"
#include "lib/engine/realize.h"
#include "lib/renderer/renderer.h"
#include "lib/uop/serialize.h"

namespace tg {

namespace {

std::vector<Opt> make_actions() {
  std::vector<Opt> a;
  for (int amt : {0, 2, 3, 4, 5, 7})
    for (int axis = 0; axis < 8; axis++) a.emplace_back(OptOps::UPCAST, axis, Arg(amt));
  for (int amt : {0, 4, 7})
    for (int axis = 0; axis < 5; axis++) a.emplace_back(OptOps::UNROLL, axis, Arg(amt));
  for (int amt : {2, 3, 4, 8, 13, 16, 29})
    for (int axis = 0; axis < 6; axis++) a.emplace_back(OptOps::LOCAL, axis, Arg(amt));
  for (int amt : {13, 16, 28, 29, 32, 49, 64, 256})
    for (int axis = 0; axis < 3; axis++) a.emplace_back(OptOps::GROUPTOP, axis, Arg(amt));
  for (int amt : {0, 4, 8, 16})
    for (int axis = 0; axis < 3; axis++) a.emplace_back(OptOps::GROUP, axis, Arg(amt));
  if (getenv_int("BEAM_PADTO", 0))
    for (int axis = 0; axis < 7; axis++) a.emplace_back(OptOps::PADTO, axis, Arg(32));
  a.emplace_back(OptOps::LOCAL, 0, Arg(32));
  a.emplace_back(OptOps::LOCAL, 6, Arg(2));
  int64_t tc = getenv_int("TC", 1), tc_opt = getenv_int("TC_OPT", 2);
  a.emplace_back(OptOps::TC, 0, Arg::tup(Arg(-1), Arg(0), Arg((long long)tc)));
  for (int axis = 0; axis < 9; axis++)
    a.emplace_back(OptOps::TC, axis, Arg::tup(Arg(-1), Arg((long long)tc_opt), Arg((long long)tc)));
  for (int a0 = 0; a0 < 5; a0++)
    for (int a1 = a0 + 1; a1 < 5; a1++) a.emplace_back(OptOps::SWAP, a0, Arg(a1));
  for (int amt : {2, 3, 4, 5, 8, 12, 16, 24, 32, 64})
    for (int axis = 0; axis < 3; axis++) a.emplace_back(OptOps::THREAD, axis, Arg(amt));
  if (getenv_int("NOLOCALS", 0)) a.emplace_back(OptOps::NOLOCALS);
  return a;
}

pyint infer_int(const sint& s, const std::map<std::string, pyint>& var_vals) {
  if (s.is_int()) return s.i();
  std::unordered_map<std::string, pyint> vv(var_vals.begin(), var_vals.end());
  PyConst r = s.u().sym_infer(vv);
  return r.is_int() ? r.as_int() : (pyint)r.as_float();
}

// get_test_global_size: halve the last dims > 16 until the launch is at most max_global_size work items
std::pair<std::vector<pyint>, double> get_test_global_size(const std::vector<pyint>& global_size,
                                                           pyint max_global_size) {
  std::vector<pyint> t = global_size;
  auto prod = [](const std::vector<pyint>& v) {
    pyint p = 1;
    for (pyint x : v) p *= x;
    return p;
  };
  pyint input_size = prod(t);
  while (prod(t) > max_global_size) {
    bool changed = false;
    for (size_t j = t.size(); j-- > 0;)
      if (t[j] > 16) {
        t[j] /= 2;
        changed = true;
        break;
      }
    if (!changed) break;
  }
  return {t, (double)input_size / (double)prod(t)};
}

// a candidate compiled for timing: the PROGRAM and its loaded runtime (freed with it)
struct Compiled1 {
  UOp prg;
  std::string src;
  std::unique_ptr<Program> rt;
  double compile_s = 0;
};

std::optional<Compiled1> try_compile(Scheduler s, Compiled& dev) {
  auto st = std::chrono::steady_clock::now();
  try {
    UOp ast = s.get_optimized_ast("test");
    UOp prg = to_program(ast, s.ren ? *s.ren : dev.renderer());
    int64_t uops_max = getenv_int("BEAM_UOPS_MAX", 3000);
    if (uops_max > 0 && (int64_t)prg.src(1).nsrc() >= uops_max) {
      if (getenv_int("BEAM_LOG_SURPASS_MAX", 0))
        std::printf("too many uops. len(uops)=%zu, uops_max=%lld\n", prg.src(1).nsrc(), (long long)uops_max);
      return std::nullopt;
    }
    Compiled1 c;
    c.prg = prg;
    c.src = prg.src(2).arg().as_str();
    std::vector<uint8_t> lib = dev.compiler().compile(c.src);
    c.rt = dev.runtime(prg.arg().as<ProgramInfo>()->function_name(), lib);
    c.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - st).count();
    return c;
  } catch (const KernelOptError&) {
  } catch (const CompileError&) {
  } catch (const Error& e) {
    if (getenv_int("BEAM_STRICT_MODE", 0)) throw;
    if (DEBUG.value() >= 4) std::fprintf(stderr, "BEAM candidate failed: %s\n", e.what());
  }
  return std::nullopt;
}

// _time_program: up to cnt timed runs, stopping early once a run is slower than early_stop
std::vector<double> time_program(const Compiled1& c, const std::map<std::string, pyint>& var_vals,
                                 const std::vector<std::shared_ptr<Buffer>>& rawbufs, std::optional<double> early_stop,
                                 bool allow_test_size, int cnt = 3) {
  const ProgramInfo* pi = c.prg.arg().as<ProgramInfo>();
  std::unordered_map<std::string, pyint> vv(var_vals.begin(), var_vals.end());
  auto [gs, ls] = pi->launch_dims(vv);
  double factor = 1;
  if (allow_test_size) {
    auto [tgs, f] = get_test_global_size(gs, 65536);
    gs = tgs, factor = f;
  }
  LaunchArgs launch = launch_args(gs, ls, true);
  std::vector<void*> bufs;
  for (int64_t slot : pi->globals) {
    if (slot < 0 || (size_t)slot >= rawbufs.size() || !rawbufs[(size_t)slot])
      throw Error("beam: no buffer for a param");
    bufs.push_back(rawbufs[(size_t)slot]->opaque());
  }
  std::vector<std::optional<pyint>> vals = pi->vals(vv);
  std::vector<double> tms;
  for (int i = 0; i < cnt; i++) {
    std::optional<double> t = (*c.rt)(bufs, vals, launch);
    tms.push_back(t.value_or(INFINITY) * factor);
    if (early_stop && *early_stop < *std::min_element(tms.begin(), tms.end())) break;
  }
  return tms;
}

std::string cache_key(const Scheduler& s, int64_t amt, bool allow_test_size) {
  std::string k;
  for (const std::string& line : encode_graph(s.ast)) k += line + "\n";
  k += "amt=" + std::to_string(amt) + " allow_test_size=" + std::to_string(allow_test_size) +
       " device=" + (s.ren ? s.ren->target.device : std::string()) +
       " renderer=" + (s.ren ? s.ren->target.renderer : "");
  return k;
}

// the cached opts for key, nullopt when absent or unreadable
std::optional<std::vector<Opt>> cache_get(const std::string& key) {
  std::optional<std::string> enc = diskcache_get("beam_search", key);
  if (!enc) return std::nullopt;
  try {
    Arg a = decode_arg(*enc);
    std::vector<Opt> r;
    for (size_t i = 0; i < a.size(); i++) r.push_back(Opt::from_arg(a[i]));
    return r;
  } catch (const Error&) {
    return std::nullopt;
  }
}

void cache_put(const std::string& key, const std::vector<Opt>& opts) {
  std::vector<Arg> items;
  for (const Opt& o : opts) items.push_back(o.to_arg());
  diskcache_put("beam_search", key, encode_arg(Arg::tuple(items)));
}

}  // namespace

const std::vector<Opt>& beam_actions() {
  static const std::vector<Opt> a = make_actions();
  return a;
}

std::map<int64_t, Scheduler> get_kernel_actions(const Scheduler& s, bool include_0, std::optional<pyint> max_up_in) {
  std::map<int64_t, Scheduler> acted;
  if (include_0) acted.emplace(0, s.copy());
  pyint max_up = max_up_in ? *max_up_in : getenv_int("BEAM_UPCAST_MAX", 256);
  pyint max_lcl = getenv_int("BEAM_LOCAL_MAX", 1024);
  const std::vector<Opt>& actions = beam_actions();
  std::vector<sint> fs = s.full_shape();
  // the action a, numbered i + 1, in `acted` when it applies within the limits; `table` says which actions exist
  auto try_action = [&](size_t i, const Opt& a, const std::vector<Opt>& table) {
    if (a.axis && a.op != OptOps::TC) {
      int64_t ax;
      try {
        ax = s.real_axis(a.op, a.axis);
      } catch (const KernelOptError&) {
        return;
      }
      if (ax >= (int64_t)s.shape_len()) return;
      if (a.arg.is_int() && fs[(size_t)ax].is_int() && fs[(size_t)ax].i() == a.arg.as_int() &&
          std::find(table.begin(), table.end(), Opt(a.op, a.axis, Arg(0))) != table.end())
        return;
    }
    Scheduler s2 = s.copy();
    try {
      s2.apply_opt(a);
      pyint up = 1, lcl = 1;
      std::vector<sint> fs2 = s2.full_shape();
      std::vector<AxisType> at = s2.axis_types();
      for (size_t j = 0; j < fs2.size(); j++) {
        pyint x = fs2[j].is_int() ? fs2[j].i() : 1;
        if (at[j] == AxisType::UPCAST || at[j] == AxisType::UNROLL)
          up *= x;
        else if (at[j] == AxisType::WARP || at[j] == AxisType::LOCAL || at[j] == AxisType::GROUP_REDUCE)
          lcl *= x;
      }
      if (up > max_up || lcl > max_lcl) {
        if (getenv_int("BEAM_LOG_SURPASS_MAX", 0))
          std::printf("too many upcast/local. up=%lld, max_up=%lld, lcl=%lld, max_lcl=%lld\n", (long long)up,
                      (long long)max_up, (long long)lcl, (long long)max_lcl);
        return;
      }
      acted.emplace((int64_t)i + 1, std::move(s2));
    } catch (const KernelOptError&) {
    }
  };
  for (size_t i = 0; i < actions.size(); i++) try_action(i, actions[i], actions);
  // the CPU register tiles' upcasts (CPU_TILE=1 on DEV=CPU), numbered after the reference's table, so that BEAM can
  // reach the tiles hand_coded_optimizations picks
  if (cpu_tiles_apply(*s.ren)) {
    static const std::vector<Opt> tiles = [] {
      std::vector<Opt> t;
      for (int amt : {8, 16})
        for (int axis = 0; axis < 8; axis++) t.emplace_back(OptOps::UPCAST, axis, Arg(amt));
      return t;
    }();
    for (size_t j = 0; j < tiles.size(); j++) try_action(actions.size() + j, tiles[j], actions);
  }
  return acted;
}

std::pair<std::vector<std::shared_ptr<Buffer>>, std::map<std::string, pyint>> args_from_ast(const UOp& ast,
                                                                                            const std::string& device) {
  std::vector<UOp> glbls;
  for (const UOp& x : ast.toposort())
    if (x.op() == Ops::PARAM)
      if (const ParamArg* p = x.arg().as<ParamArg>(); p && p->slot >= 0) glbls.push_back(x);
  std::sort(glbls.begin(), glbls.end(),
            [](const UOp& a, const UOp& b) { return a.arg().as<ParamArg>()->slot < b.arg().as<ParamArg>()->slot; });
  std::vector<std::shared_ptr<Buffer>> bufs;
  for (const UOp& x : glbls) {
    DType dt = x.dtype();
    auto b = std::make_shared<Buffer>(device, (size_t)std::max<pyint>(1, x.max_numel()), dt);
    b->ensure_allocated();
    // zeros, not garbage: a kernel that loads indices from a buffer (gather) must stay in bounds
    std::vector<uint8_t> zeros(b->nbytes(), 0);
    b->copyin(zeros);
    bufs.push_back(b);
  }
  std::map<std::string, pyint> var_vals;
  for (const UOp& k : ast.variables()) {
    PyConst lo = k.vmin(), hi = k.vmax();
    var_vals[k.expr()] = (lo.as_int() + hi.as_int()) / 2;
  }
  return {bufs, var_vals};
}

Scheduler beam_search(const Scheduler& s, const std::vector<std::shared_ptr<Buffer>>& rawbufs,
                      const std::map<std::string, pyint>& var_vals, int64_t amt, bool allow_test_size,
                      std::optional<bool> disable_cache_in) {
  bool disable_cache = disable_cache_in ? *disable_cache_in : getenv_int("IGNORE_BEAM_CACHE", 0) != 0;
  int64_t cachelevel = getenv_int("CACHELEVEL", 2);
  std::string key = cache_key(s, amt, allow_test_size);
  if (!disable_cache && cachelevel >= 1) {
    if (auto val = cache_get(key)) {
      Scheduler ret = s.copy();
      for (size_t i = s.applied_opts.size(); i < val->size(); i++) ret.apply_opt((*val)[i]);
      return ret;
    }
  }
  if (!s.ren) throw Error("beam_search: the Scheduler has no renderer");
  Compiled& dev = get_device(s.ren->target.device);
  // the candidates' codegen is not recorded into the trace
  Context quiet({{"TRACK_MATCH_STATS", 0}});

  std::vector<std::pair<Scheduler, double>> beam;
  beam.emplace_back(s.copy(), INFINITY);
  std::set<std::string> seen_libs;
  double min_progress;
  try {
    min_progress = std::stod(getenv_str("BEAM_MIN_PROGRESS", "0.01")) / 1e6;
  } catch (const std::exception&) {
    throw Error("BEAM_MIN_PROGRESS must be a number of microseconds, got '" + getenv_str("BEAM_MIN_PROGRESS", "") +
                "'");
  }
  int64_t beam_debug = getenv_int("BEAM_DEBUG", 0);
  // below DEBUG=2 (which prints the reference's per-candidate lines) a search that can take minutes says what it is
  // doing: one line per searched kernel on stderr, begun here and finished when the search ends
  const bool progress = DEBUG.value() < 2 && !beam_debug;
  if (progress) {
    std::string shape;
    for (const UOp& r : s.rngs()) shape += (shape.empty() ? "" : "x") + r.src(0).render();
    std::fprintf(stderr, "BEAM %lld: searching the %s kernel ...", (long long)amt, shape.c_str());
    std::fflush(stderr);
  }
  size_t n_timed = 0;
  if (DEBUG.value() >= 2)
    std::printf("   0.00s:                from   1 ->   1 actions %s\n", s.colored_shape().c_str());
  auto st = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - st).count(); };
  bool exiting = false;
  while (!exiting) {
    std::vector<Scheduler> candidates;
    for (auto& [si, _] : beam)
      for (auto& [i, s2] : get_kernel_actions(si, false)) candidates.push_back(std::move(s2));
    std::vector<std::pair<size_t, double>> timed;
    double least_compute_ops = INFINITY;
    for (size_t i = 0; i < candidates.size(); i++) {
      std::optional<Compiled1> c = try_compile(candidates[i].copy(), dev);
      if (!c) continue;
      if (seen_libs.count(c->src)) continue;
      std::vector<UOp> lin(c->prg.src(1).src().begin(), c->prg.src(1).src().end());
      double this_ops = (double)infer_int(Estimates::from_uops(lin, true).ops, var_vals);
      least_compute_ops = std::min(least_compute_ops, this_ops);
      if (least_compute_ops * 1000 < this_ops) continue;
      seen_libs.insert(c->src);
      std::vector<double> tms;
      try {
        tms = time_program(*c, var_vals, rawbufs, beam.empty() ? std::optional<double>(1.0) : beam[0].second * 3,
                           allow_test_size);
      } catch (const Error& e) {
        if (beam_debug)
          std::printf("BEAM failed for opts: %s\n%s\n", opts_repr(candidates[i].applied_opts).c_str(), e.what());
        continue;
      }
      timed.emplace_back(i, *std::min_element(tms.begin(), tms.end()));
      n_timed++;
      if (beam_debug > 1) {
        std::printf("%7.2fs: %5zu %5zu uops %s compile/%s run       %4zu/%4zu         %s\n", elapsed(), i,
                    c->prg.src(1).nsrc(), time_to_str(c->compile_s, 12).c_str(),
                    time_to_str(timed.back().second, 12).c_str(), timed.size(), candidates.size(),
                    candidates[i].colored_shape().c_str());
      } else if (DEBUG.value() >= 2) {
        std::printf("\r%7.2fs: %s       %4zu/%4zu         %s\033[K", elapsed(),
                    time_to_str(timed.back().second, 12).c_str(), timed.size(), candidates.size(),
                    candidates[i].colored_shape().c_str());
        std::fflush(stdout);
      }
    }
    std::stable_sort(timed.begin(), timed.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    exiting = timed.empty() || timed[0].second < min_progress ||
              (!beam.empty() && (beam[0].second - timed[0].second) < min_progress);
    if (!exiting) {
      beam.clear();
      for (size_t j = 0; j < timed.size() && (int64_t)j < amt; j++)
        beam.emplace_back(candidates[timed[j].first].copy(), timed[j].second);
    } else if (!timed.empty() && timed[0].second < beam[0].second) {
      beam.clear();
      beam.emplace_back(candidates[timed[0].first].copy(), timed[0].second);
    }
    if (DEBUG.value() >= 2) {
      std::string t = time_to_str(beam[0].second, 12);
      std::printf("\r%7.2fs: %s from %3zu -> %3zu actions\033[K %s\n", elapsed(),
                  (exiting ? colored(t, "green") : t).c_str(), candidates.size(), timed.size(),
                  beam[0].first.colored_shape().c_str());
    }
  }
  if (progress) {
    std::fprintf(stderr, " best %s after %.1f s, %zu candidates timed\n",
                 std::isfinite(beam[0].second) ? time_to_str(beam[0].second, 0).c_str() : "no candidate ran", elapsed(),
                 n_timed);
  }
  if (cachelevel >= 1) cache_put(key, beam[0].first.applied_opts);
  if (beam_debug)
    std::printf("BEAM_SEARCH: final tm=%s, applied_opts=%s\n", time_to_str(beam[0].second, 0).c_str(),
                opts_repr(beam[0].first.applied_opts).c_str());
  return beam[0].first.copy();
}

}  // namespace tg
