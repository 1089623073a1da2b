#include "lib/codegen/late/program.h"

#include <algorithm>
#include <cstdio>

#include "lib/codegen/helpers.h"
#include "lib/codegen/late/linearizer.h"
#include "lib/codegen/late/uop_props.h"
#include "lib/codegen/opt/heuristic.h"
#include "lib/recorder.h"
#include "lib/renderer/renderer.h"
#include "lib/uop/kernel_info.h"
#include "lib/uop/nodemap.h"
#include "lib/uop/track.h"

namespace tg {

const LinePatternMatcher& pm_linearize_cleanups() {
  static const LinePatternMatcher pm(
      "pm_linearize_cleanups",
      {
          // if statements are not allowed in the graph
          TG_RULE(UPat(ops(Ops::IF, Ops::ENDIF)),
                  []() -> std::optional<LineRewrite> { throw Error("if not allowed in graph"); }),
          // gated STORE becomes IF-STORE-ENDIF. this is the only use of IF-ENDIF
          TG_RULE(UPat(Ops::STORE)
                      .src(UPat(ops(Ops::INDEX, Ops::SHRINK)).or_casted(), UPat(),
                           UPat().named("gate").dtype(dtypes::bool_))
                      .named("u"),
                  [](U u, U gate) -> std::optional<LineRewrite> {
                    UOp st = u.with_src({u.src(0), u.src(1)});
                    UOp mif(Ops::IF, dtypes::void_, {gate, u.src(0)});
                    return LineRewrite{st, {mif, st, UOp(Ops::ENDIF, dtypes::void_, {mif})}};
                  }),
      });
  return pm;
}

std::vector<UOp> line_rewrite(const std::vector<UOp>& lst, const LinePatternMatcher& pm, CtxRef ctx) {
  std::vector<UOp> newlst;
  newlst.reserve(lst.size());
  // the lines whose replacement is another node (most are themselves: a node whose srcs are all unchanged is kept
  // without rebuilding it, as u.replace(src=...) gives the same node)
  NodeMap<UOp> replaced(64);
  std::vector<UOp> src;
  for (const UOp& u : lst) {
    UOp nu = u;
    if (replaced.size()) {
      bool changed = false;
      src.clear();
      for (const UOp& x : u.src()) {
        const UOp* r = replaced.find(x);
        src.push_back(r ? *r : x);
        changed |= r != nullptr;
      }
      if (changed) nu = u.with_src(src);
    }
    std::optional<LineRewrite> ret = pm.rewrite(nu, ctx);
    if (!ret) {
      if (!(nu == u)) *replaced.emplace(u).first = nu;
      newlst.push_back(std::move(nu));
      continue;
    }
    if (!(ret->replaced == u)) *replaced.emplace(u).first = ret->replaced;
    newlst.insert(newlst.end(), ret->lines.begin(), ret->lines.end());
  }
  return newlst;
}

std::vector<UOp> do_linearize(const UOp& sink) { return line_rewrite(linearize(sink), pm_linearize_cleanups()); }

// ***** skipping a gated reduce loop (CPU_TILE=1, not in the reference) *****

// the conjuncts of a bool: AND(AND(a, b), c) -> {a, b, c}
static void and_atoms(const UOp& g, std::vector<UOp>& out) {
  if (g.op() == Ops::AND && g.dtype() == dtypes::bool_) {
    for (const UOp& s : g.src()) and_atoms(s, out);
  } else if (!contains(out, g)) {
    out.push_back(g);
  }
}

// the register buffer (a PARAM in addrspace REG) an INDEX or an AFTER of one addresses, or a null UOp
static UOp reg_of(const UOp& x) {
  UOp b = x;
  while (b.op() == Ops::INDEX || b.op() == Ops::AFTER || b.op() == Ops::CAST) b = b.src(0);
  return (b.op() == Ops::PARAM || b.op() == Ops::BUFFER) && b.addrspace() == AddrSpace::REG ? b : UOp();
}

std::vector<UOp> skip_gated_reduce_loops(std::vector<UOp> lst) {
  // The reference's transposed convolution (a convolution's input gradient) sums where(valid, sum_c(w * g), 0) over
  // the taps of a window, valid for about two thirds of them: the inner sum's loads are gated by valid and its result
  // is selected by it, so on an invalid tap the loop adds zeros that are then thrown away. A loop whose only effect is
  // on register accumulators, each read after it only as the taken side of a WHERE whose condition implies a gate that
  // is known before the loop, gets IF(gate) ... ENDIF around it: where the gate is false nothing of the loop is used,
  // so every value is the same and the invalid taps cost nothing.
  NodeMap<size_t> pos(lst.size() * 2);
  for (size_t i = 0; i < lst.size(); i++) *pos.emplace(lst[i]).first = i;
  NodeMap<std::vector<UOp>> users(16);  // built when the first loop qualifies (most kernels have none)
  bool have_users = false;
  struct Wrap {
    size_t begin, end;
    UOp gate, idx;
  };
  std::vector<Wrap> wraps;
  for (size_t j = 0; j < lst.size(); j++) {
    const UOp& e = lst[j];
    if (e.op() != Ops::END || e.nsrc() != 2 || e.src(1).op() != Ops::RANGE) continue;
    const size_t* pi = pos.find(e.src(1));
    if (!pi) continue;
    size_t i = *pi;
    std::vector<UOp> regs;
    UOp gate;
    bool ok = true;
    for (size_t k = i + 1; k < j && ok; k++) {
      const UOp& u = lst[k];
      switch (u.op()) {
        case Ops::STORE: {
          UOp r = reg_of(u.src(0));
          if (!r)
            ok = false;
          else if (!contains(regs, r))
            regs.push_back(r);
          break;
        }
        case Ops::LOAD:
          if (!gate && u.nsrc() == 3 && u.src(2).dtype() == dtypes::bool_) {
            const size_t* pg = pos.find(u.src(2));
            if (pg && *pg < i) gate = u.src(2);
          }
          break;
        case Ops::IF:
        case Ops::ENDIF:
        case Ops::BARRIER:
        case Ops::CUSTOM:
        case Ops::CUSTOMI:
          ok = false;
          break;
        default:
          break;
      }
    }
    if (!ok || !gate || regs.empty()) continue;
    if (!have_users) {
      for (const UOp& u : lst)
        for (const UOp& s : u.src()) users.emplace(s).first->push_back(u);
      have_users = true;
    }
    std::vector<UOp> need;
    and_atoms(gate, need);
    // every read of an accumulator outside the loop comes after it and is the taken side of a WHERE whose condition
    // has every conjunct of the gate
    for (size_t k = 0; k < lst.size() && ok; k++) {
      const UOp& u = lst[k];
      if ((k > i && k < j) || u.op() != Ops::LOAD || !contains(regs, reg_of(u.src(0)))) continue;
      if (k < j) {
        ok = false;
        break;
      }
      const std::vector<UOp>* us = users.find(u);
      if (!us) continue;
      for (const UOp& w : *us) {
        if (w.op() != Ops::WHERE || !(w.src(1) == u) || w.src(0) == u || w.src(2) == u) {
          ok = false;
          break;
        }
        std::vector<UOp> have;
        and_atoms(w.src(0), have);
        for (const UOp& a : need) ok &= contains(have, a);
      }
    }
    if (!ok) continue;
    // IF takes an INDEX (the spec's IF(gate, INDEX)): one of the accumulators' before the loop
    UOp idx;
    for (size_t k = 0; k < i && !idx; k++)
      if (lst[k].op() == Ops::INDEX && contains(regs, reg_of(lst[k]))) idx = lst[k];
    if (!idx) continue;
    // loops nest: one inside a loop already wrapped needs no IF of its own
    bool nested = false;
    for (const Wrap& w : wraps) nested |= w.begin < i && j < w.end;
    if (!nested) wraps.push_back({i, j, gate, idx});
  }
  if (wraps.empty()) return lst;
  std::vector<UOp> out;
  out.reserve(lst.size() + 2 * wraps.size());
  std::vector<UOp> ifs(wraps.size());
  for (size_t k = 0; k < lst.size(); k++) {
    for (size_t w = 0; w < wraps.size(); w++)
      if (wraps[w].begin == k) out.push_back(ifs[w] = UOp(Ops::IF, dtypes::void_, {wraps[w].gate, wraps[w].idx}));
    out.push_back(lst[k]);
    for (size_t w = 0; w < wraps.size(); w++)
      if (wraps[w].end == k) out.push_back(UOp(Ops::ENDIF, dtypes::void_, {ifs[w]}));
  }
  return out;
}

std::string do_render(const Renderer& ren, const UOp& sink) { return ren.render(do_linearize(sink)); }

// ************************* ProgramInfo *************************

std::string ProgramInfo::function_name() const { return to_function_name(name); }

std::vector<std::pair<std::string, size_t>> ProgramInfo::runtimevars() const {
  std::vector<std::pair<std::string, size_t>> r;
  for (size_t i = 0; i < vars.size(); i++)
    if (vars[i].expr() == "core_id") r.push_back({"core_id", i});
  return r;
}

static pyint infer(const sint& s, const std::unordered_map<std::string, pyint>& var_vals) {
  return s.is_int() ? s.i() : s.u().sym_infer(var_vals).as_int();
}

std::pair<std::vector<pyint>, std::optional<std::vector<pyint>>> ProgramInfo::launch_dims(
    const std::unordered_map<std::string, pyint>& var_vals) const {
  std::vector<pyint> g;
  for (const sint& s : global_size) g.push_back(infer(s, var_vals));
  std::optional<std::vector<pyint>> l;
  if (local_size) {
    l.emplace();
    for (const sint& s : *local_size) l->push_back(infer(s, var_vals));
  }
  return {g, l};
}

std::vector<std::optional<pyint>> ProgramInfo::vals(const std::unordered_map<std::string, pyint>& var_vals) const {
  std::vector<std::optional<pyint>> r;
  for (const UOp& v : vars) {
    std::string e = v.expr();
    if (e == "core_id") {
      r.push_back(std::nullopt);
      continue;
    }
    auto it = var_vals.find(e);
    if (it == var_vals.end()) throw Error("unbound Variable '" + e + "' used by " + function_name());
    r.push_back(it->second);
  }
  return r;
}

ProgramInfo ProgramInfo::from_sink(const UOp& sink, const std::string& target) {
  ProgramInfo p;
  p.target = target;
  std::vector<UOp> vars;
  std::vector<int64_t> globals, outs, ins;
  std::vector<sint> global_size{1, 1, 1};
  std::optional<std::vector<sint>> local_size = std::vector<sint>{1, 1, 1};
  AddrSpaceCache as;
  for (const UOp& u : sink.toposort_borrowed()) {
    if (u.op() == Ops::PARAM && as.get(u) == AddrSpace::ALU) vars.push_back(u);
    if (u.op() == Ops::PARAM && as.get(u) != AddrSpace::ALU) globals.push_back(u.param_arg()->slot);
    if (u.op() == Ops::STORE || u.op() == Ops::LOAD) {
      UOp idx = u.src(0);
      bool ok = idx.op() == Ops::INDEX || idx.op() == Ops::SHRINK;
      if (!ok && u.src(0).op() == Ops::CAST) {
        idx = u.src(0).src(0);
        ok = idx.op() == Ops::INDEX;
      }
      if (ok) {
        UOp b = buf_uop(idx.src(0));
        if (b.op() == Ops::PARAM) (u.op() == Ops::STORE ? outs : ins).push_back(b.param_arg()->slot);
      }
    }
    if (u.op() == Ops::SPECIAL) {
      const std::string& a = u.arg().as_str();
      if (a.front() == 'i') local_size.reset();
      std::vector<sint>* sz = a.front() == 'l' ? (local_size ? &*local_size : nullptr) : &global_size;
      if (sz) (*sz)[(size_t)(a.back() - '0')] = u.src(0).ssimplify();
    }
    if (u.op() == Ops::PARAM && std::find(vars.begin(), vars.end(), u) != vars.end() && u.expr() == "core_id")
      global_size[0] = sint(u.vmax().as_int() + 1);
  }
  const KernelInfo* k = sink.arg().as<KernelInfo>();
  p.name = k ? k->name : "test";
  p.global_size = global_size;
  p.local_size = local_size;
  auto dedup_sorted = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  for (const UOp& v : vars)
    if (std::find(p.vars.begin(), p.vars.end(), v) == p.vars.end()) p.vars.push_back(v);
  std::stable_sort(p.vars.begin(), p.vars.end(), [](U a, U b) { return a.param_arg()->slot < b.param_arg()->slot; });
  p.globals = dedup_sorted(globals);
  p.outs = dedup_sorted(outs);
  p.ins = dedup_sorted(ins);
  return p;
}

static Arg sints_arg(const std::vector<sint>& v) {
  std::vector<Arg> a;
  for (const sint& s : v) a.push_back(s.is_int() ? Arg(s.i()) : Arg(s.u().render()));
  return Arg::tuple(a);
}
static Arg ints_arg(const std::vector<int64_t>& v) {
  std::vector<Arg> a;
  for (int64_t x : v) a.push_back(Arg((long long)x));
  return Arg::tuple(a);
}
void ProgramInfo::for_each_uop(void (*fn)(const UOp&, void*), void* ctx) const {
  for (const sint& s : global_size)
    if (!s.is_int()) fn(s.u(), ctx);
  if (local_size)
    for (const sint& s : *local_size)
      if (!s.is_int()) fn(s.u(), ctx);
  for (const UOp& v : vars) fn(v, ctx);
}

size_t ProgramInfo::hash() const {
  size_t h = std::hash<std::string>()(name) * 31 + sints_arg(global_size).hash();
  h = h * 31 + (local_size ? sints_arg(*local_size).hash() : 7);
  for (const UOp& v : vars) h = h * 31 + v.ptr_hash();
  h = h * 31 + ints_arg(globals).hash();
  h = h * 31 + ints_arg(outs).hash();
  h = h * 31 + ints_arg(ins).hash();
  return h * 31 + std::hash<std::string>()(target);
}
static bool same_sints(const std::vector<sint>& a, const std::vector<sint>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (!a[i].same(b[i])) return false;
  return true;
}
bool ProgramInfo::equals(const ArgObj& o) const {
  auto* p = dynamic_cast<const ProgramInfo*>(&o);
  return p && name == p->name && same_sints(global_size, p->global_size) &&
         local_size.has_value() == p->local_size.has_value() &&
         (!local_size || same_sints(*local_size, *p->local_size)) && vars == p->vars && globals == p->globals &&
         outs == p->outs && ins == p->ins && target == p->target;
}
std::string ProgramInfo::repr() const {
  std::string v;
  for (size_t i = 0; i < vars.size(); i++) v += (i ? ", " : "") + vars[i].expr();
  return "ProgramInfo(name=" + Arg(name).repr() + ", global_size=" + sints_arg(global_size).repr() +
         ", local_size=" + (local_size ? sints_arg(*local_size).repr() : std::string("None")) + ", vars=(" + v +
         (vars.size() == 1 ? ",)" : ")") + ", globals=" + ints_arg(globals).repr() + ", outs=" + ints_arg(outs).repr() +
         ", ins=" + ints_arg(ins).repr() + ", target=" + target + ")";
}

// ************************* pm_to_program *************************

const PatternMatcher& pm_to_program() {
  static const PatternMatcher pm(
      "pm_to_program",
      {
          TG_RULE(UPat(Ops::PROGRAM).src(UPat(Ops::SINK).named("sink")).named("prg"),
                  [](const Renderer* ctx, U prg, U sink) {
                    std::vector<UOp> src(prg.src().begin(), prg.src().end());
                    std::vector<UOp> lin = do_linearize(sink);
                    if (cpu_tiles_apply(*ctx)) lin = skip_gated_reduce_loops(std::move(lin));
                    src.push_back(UOp(Ops::LINEAR, dtypes::void_, lin));
                    return prg.with_src(src);
                  }),
          TG_RULE(UPat(Ops::PROGRAM).src(UPat(), UPat(Ops::LINEAR).named("lin")).named("prg"),
                  [](const Renderer* ctx, U prg, U lin) {
                    std::vector<UOp> lst(lin.src().begin(), lin.src().end());
                    std::vector<UOp> src(prg.src().begin(), prg.src().end());
                    src.push_back(UOp(Ops::SOURCE, dtypes::void_, std::vector<UOp>{}, Arg(ctx->render(lst))));
                    return prg.with_src(src);
                  }),
      });
  return pm;
}

UOp to_program_from_full_sink(const UOp& full_sink, const Renderer& ren) {
  UOp prg(Ops::PROGRAM, dtypes::void_, {full_sink}, ProgramInfo::from_sink(full_sink, ren.target.repr()).to_arg());
  UOp ret = graph_rewrite(prg, pm_to_program(), {.ctx = const_cast<const Renderer*>(&ren), .name = "linearize/render"});
  record_program(ret, ren.target.device);
  return ret;
}

// ***** kernels in the trace *****

std::string format_uops(const std::vector<UOp>& uops) {
  std::unordered_map<const void*, size_t> index;
  for (size_t i = 0; i < uops.size(); i++) index[uops[i].node()] = i;
  std::string out;
  char buf[64];
  for (size_t i = 0; i < uops.size(); i++) {
    const UOp& u = uops[i];
    std::string srcs = "[";
    for (size_t k = 0; k < u.nsrc(); k++) {
      const UOp& x = u.src(k);
      auto it = index.find(x.node());
      srcs += (k ? ", " : "") + (it == index.end()      ? std::string("'--'")
                                 : x.op() == Ops::CONST ? "'" + x.val().repr() + "'"
                                                        : std::to_string(it->second));
    }
    srcs += "]";
    std::string op = op_repr(u.op()), dt = u.dtype().repr();
    std::snprintf(buf, sizeof buf, "%4zu ", i);
    out += buf;
    out += op + std::string(op.size() < 20 ? 20 - op.size() : 0, ' ') + ": ";
    out += dt + std::string(dt.size() < 40 ? 40 - dt.size() : 0, ' ') + " ";
    out += srcs + std::string(srcs.size() < 32 ? 32 - srcs.size() : 0, ' ') + " " + u.arg().repr() + "\n";
  }
  return out;
}

uint64_t record_program(const UOp& prg, const std::string& device) {
  Recorder* r = profile_recorder();
  if (!r || prg.op() != Ops::PROGRAM || prg.nsrc() < 3) return 0;
  if (uint64_t id = track::program_id(prg)) return id;
  const ProgramInfo* pi = prg.arg().as<ProgramInfo>();
  ProgramRecord rec;
  rec.name = ansistrip(pi ? pi->name : "kernel");
  rec.device = device;
  rec.context = track::current_context();
  rec.source = prg.src(2).arg().is_str() ? prg.src(2).arg().as_str() : "";
  std::vector<UOp> lines(prg.src(1).src().begin(), prg.src(1).src().end());
  rec.uops = format_uops(lines);
  auto dims = [](const std::vector<sint>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); i++) s += (i ? ", " : "") + v[i].str();
    return s + "]";
  };
  if (pi) {
    rec.global_size = dims(pi->global_size);
    rec.local_size = pi->local_size ? dims(*pi->local_size) : "None";
  }
  Estimates est = Estimates::from_uops(lines, true).simplify();
  rec.ops = est.ops.is_int() ? (int64_t)est.ops.i() : -1;
  rec.mem = est.mem.is_int() ? (int64_t)est.mem.i() : -1;
  rec.lds = est.lds.is_int() ? (int64_t)est.lds.i() : -1;
  uint64_t id = r->program(rec);
  track::set_program_id(prg, id);
  return id;
}

uint64_t recorded_program_id(const UOp& prg) { return track::program_id(prg); }

}  // namespace tg
