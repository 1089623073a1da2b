#include "lib/codegen/opt/postrange.h"

#include <algorithm>

#include "lib/codegen/helpers.h"
#include "lib/codegen/opt/heuristic.h"
#include "lib/codegen/opt/search.h"
#include "lib/codegen/simplify.h"
#include "lib/uop/kernel_info.h"

namespace tg {

const char* axis_color(AxisType t) {
  switch (t) {
    case AxisType::DEVICE:
      return "green";
    case AxisType::GLOBAL:
      return "blue";
    case AxisType::THREAD:
      return "BLUE";
    case AxisType::LOCAL:
      return "cyan";
    case AxisType::WARP:
      return "CYAN";
    case AxisType::WEAK:
    case AxisType::LOOP:
      return "WHITE";
    case AxisType::UPCAST:
      return "yellow";
    case AxisType::GROUP_REDUCE:
      return "RED";
    case AxisType::REDUCE:
      return "red";
    case AxisType::UNROLL:
      return "magenta";
    default:
      throw Error("no axis color for this AxisType");
  }
}
int axis_to_pos(AxisType t) {
  switch (t) {
    case AxisType::DEVICE:
      return -2;
    case AxisType::WEAK:
    case AxisType::LOOP:
      return -1;
    case AxisType::THREAD:
    case AxisType::GLOBAL:
      return 0;
    case AxisType::WARP:
      return 1;
    case AxisType::LOCAL:
    case AxisType::GROUP_REDUCE:
      return 2;
    case AxisType::UPCAST:
      return 3;
    case AxisType::REDUCE:
      return 4;
    case AxisType::UNROLL:
      return 5;
    default:
      throw Error("no axis position for this AxisType");
  }
}

static AxisType atype(const UOp& r) { return r.arg().items().back().as_axis(); }
// rng.arg[:-1] as a python tuple repr
static std::string arg_head_repr(const UOp& r) {
  const auto& it = r.arg().items();
  return Arg::tuple(std::vector<Arg>(it.begin(), it.end() - 1)).repr();
}
static Arg arg_head(const UOp& r) {
  const auto& it = r.arg().items();
  return Arg::tuple(std::vector<Arg>(it.begin(), it.end() - 1));
}
static std::string axis_type_lower(AxisType t) {
  std::string s = axis_type_name(t);
  for (char& c : s) c = (char)std::tolower((unsigned char)c);
  return s;
}
static pyint int_of(const sint& s) {
  if (!s.is_int()) throw Error("symbolic shape where an int is needed: " + s.str());
  return s.i();
}
// python list indexing with negative wrap; IndexError -> KernelOptError
template <typename T>
static const T& py_at(const std::vector<T>& v, int64_t i) {
  int64_t n = (int64_t)v.size();
  if (i < 0) i += n;
  if (i < 0 || i >= n) throw KernelOptError("list index out of range");
  return v[(size_t)i];
}

Scheduler::Scheduler(const UOp& ast_, const Renderer& ren_) : ast(ast_), ren(&ren_) {
  const KernelInfo* ki = ast.arg().as<KernelInfo>();
  dont_use_locals = ki ? ki->dont_use_locals : false;
  if (ki)
    for (const Arg& a : ki->applied_opts.items()) applied_opts.push_back(Opt::from_arg(a));
  int64_t mx = 0;
  for (const UOp& r : rngs()) mx = std::max<int64_t>(mx, (int64_t)r.arg()[0].as_int());
  opt_range_ = mx + 1;
}

std::vector<UOp> Scheduler::rngs() const {
  if (rngs_of_ && rngs_of_ == ast) return rngs_;
  std::vector<UOp> r;
  for (const UOp& u : ast.backward_slice())
    if (u.op() == Ops::RANGE && u.dtype() != dtypes::void_ && py_lt(PyConst(0), u.vmax()) &&
        atype(u) != AxisType::DEVICE)
      r.push_back(u);
  std::stable_sort(r.begin(), r.end(), [](U a, U b) {
    int pa = axis_to_pos(atype(a)), pb = axis_to_pos(atype(b));
    if (pa != pb) return pa < pb;
    return arg_head(a).py_cmp(arg_head(b)) < 0;
  });
  rngs_of_ = ast, rngs_ = r;
  return r;
}
std::vector<sint> Scheduler::full_shape() const {
  std::vector<sint> r;
  for (const UOp& x : rngs()) r.push_back(x.src(0).ssimplify());
  return r;
}
std::vector<AxisType> Scheduler::axis_types() const {
  std::vector<AxisType> r;
  for (const UOp& x : rngs()) r.push_back(atype(x));
  return r;
}
std::vector<std::string> Scheduler::shape_str() const {
  std::vector<std::string> ret;
  std::vector<std::pair<AxisType, int>> cnt;
  for (AxisType x : axis_types()) {
    auto it = std::find_if(cnt.begin(), cnt.end(), [&](auto& p) { return p.first == x; });
    if (it == cnt.end())
      cnt.emplace_back(x, 0), it = cnt.end() - 1;
    else
      it->second++;
    ret.push_back(std::string(1, axis_letter(x)) + std::to_string(it->second));
  }
  return ret;
}

Scheduler Scheduler::copy() const {
  Scheduler ret(ast, *ren);
  ret.dont_use_locals = dont_use_locals;
  ret.applied_opts = applied_opts;
  return ret;
}

UOp Scheduler::get_optimized_ast(const std::optional<std::string>& name_override) {
  std::string name;
  if (name_override)
    name = *name_override;
  else {
    std::string k_type = reduceop() ? "r" : "E";
    std::vector<UOp> specials;
    for (const UOp& x : ast.toposort())
      if (x.op() == Ops::SPECIAL) specials.push_back(x);
    std::stable_sort(specials.begin(), specials.end(), [](U a, U b) { return a.arg().py_cmp(b.arg()) < 0; });
    std::vector<std::string> parts{""};
    for (const UOp& x : specials)
      parts.push_back(colored(py_add(x.vmax(), PyConst(1)).str(), x.arg().as_str()[0] == 'g' ? "blue" : "cyan"));
    auto rs = rngs();
    auto cs = colors();
    for (size_t i = 0; i < rs.size(); i++) parts.push_back(colored(rs[i].src(0).render(), cs[i]));
    std::string sep = colored("_", "BLACK");
    name = k_type;
    for (size_t i = 0; i < parts.size(); i++) name += (i ? sep : "") + parts[i];
  }
  ast = graph_rewrite(ast, pm_flatten_range(), {.name = "flatten range"});
  KernelInfo ki(name);
  std::vector<Arg> opts;
  for (const Opt& o : applied_opts) opts.push_back(o.to_arg());
  ki.applied_opts = Arg::tuple(opts);
  ki.dont_use_locals = dont_use_locals;
  return ast.replace({}, {}, {}, ki.to_arg(), Arg(1));
}

std::vector<UOp> Scheduler::output_rngs() const {
  std::vector<UOp> r;
  for (const UOp& s : ast.src())
    if (s.op() == Ops::END)
      for (const UOp& x : UOp::sink(srcs_from(s, 1)).ranges())
        if (atype(x) != AxisType::REDUCE) r.push_back(x);
  return r;
}
std::vector<UOp> Scheduler::globalizable_rngs() const {
  std::vector<UOp> ret;
  for (const UOp& r : output_rngs())
    if (atype(r) == AxisType::WEAK) ret.push_back(r);
  // exclude any output ranges from global that don't appear in all BUFFERIZE
  for (const UOp& x : ast.toposort())
    if (x.op() == Ops::STAGE) {
      std::vector<UOp> xr = x.ranges(), keep;
      for (const UOp& r : ret)
        if (contains(xr, r)) keep.push_back(r);
      ret = keep;
    }
  return ret;
}

void Scheduler::convert_loop_to_global() {
  if (!ren->has_local) return;
  std::vector<UOp> g = globalizable_rngs(), rs = rngs();
  std::vector<std::pair<UOp, UOp>> sub;
  for (const UOp& x : rs) {
    if (!contains(g, x)) continue;
    std::vector<Arg> a(x.arg().items().begin(), x.arg().items().end() - 1);
    a.push_back(Arg(AxisType::GLOBAL));
    sub.emplace_back(x, x.with_arg(Arg::tuple(a)));
  }
  ast = ast.substitute(sub);
}

std::vector<std::string> Scheduler::colors() const {
  std::vector<UOp> out = output_rngs(), glob = globalizable_rngs(), rs = rngs();
  std::vector<std::string> ret;
  for (const UOp& r : rs) {
    AxisType x = atype(r);
    if (dont_use_locals && x == AxisType::GLOBAL)
      ret.push_back("BLUE");
    else if (!contains(out, r) && x == AxisType::WEAK)
      ret.push_back("BLACK");
    else if (!contains(glob, r) && x == AxisType::WEAK)
      ret.push_back("white");
    else
      ret.push_back(axis_color(x));
  }
  return ret;
}
std::string Scheduler::colored_shape() const {
  auto rs = rngs();
  auto cs = colors();
  std::string r;
  for (size_t i = 0; i < rs.size(); i++) {
    std::string s = rs[i].src(0).render();
    if (s.size() < 4) s = std::string(4 - s.size(), ' ') + s;
    r += (i ? " " : "") + colored(s, cs[i]);
  }
  return r;
}

std::pair<UOp, UOp> Scheduler::shift_to(const UOp& rng, int64_t amount, AxisType new_type, bool top,
                                        const UOp& input_new_rng) {
  UOp old_sz = rng.src(0).divides(amount);
  if (!old_sz)
    throw KernelOptError(std::to_string(amount) + " can't divide " + rng.src(0).repr() + " in " + colored_shape());
  UOp new_rng = input_new_rng ? input_new_rng : UOp::range(sint(amount), opt_range_++, new_type, rng.dtype());
  UOp replaced_rng = rng.with_src({old_sz});
  UOp sub_axis = top ? new_rng * old_sz + replaced_rng : replaced_rng.mul(PyConst(amount)) + new_rng;
  std::string name = "shift " + arg_head_repr(rng) + " " + std::to_string(amount) + " " + axis_type_lower(new_type);
  ast = ast.substitute({{rng, sub_axis}}, name.c_str());
  return {replaced_rng, new_rng};
}

std::vector<UOp> Scheduler::ranges_of(std::initializer_list<AxisType> types) const {
  std::vector<UOp> r;
  for (const UOp& x : rngs())
    if (std::find(types.begin(), types.end(), atype(x)) != types.end()) r.push_back(x);
  return r;
}
std::vector<int64_t> Scheduler::axes_of(std::initializer_list<AxisType> types) const {
  std::vector<int64_t> r;
  auto at = axis_types();
  for (size_t i = 0; i < at.size(); i++)
    if (std::find(types.begin(), types.end(), at[i]) != types.end()) r.push_back((int64_t)i);
  return r;
}
pyint Scheduler::upcast_size() const {
  auto fs = full_shape();
  pyint p = 1;
  for (int64_t a : axes_of({AxisType::UPCAST, AxisType::UNROLL})) p *= int_of(fs[(size_t)a]);
  return p;
}
std::vector<int64_t> Scheduler::upcastable_dims() const {
  auto fs = full_shape();
  std::vector<int64_t> r;
  for (int64_t i : axes_of({AxisType::GLOBAL, AxisType::LOCAL, AxisType::WEAK}))
    if (fs[(size_t)i].is_int() && fs[(size_t)i].i() > 1) r.push_back(i);
  return r;
}
std::vector<int64_t> Scheduler::unrollable_dims() const {
  auto fs = full_shape();
  std::vector<int64_t> r;
  for (int64_t i : axes_of({AxisType::GROUP_REDUCE, AxisType::REDUCE}))
    if (fs[(size_t)i].is_int() && fs[(size_t)i].i() > 1) r.push_back(i);
  return r;
}

int64_t Scheduler::real_axis(OptOps op, std::optional<int64_t> axis) const {
  if (!axis || op == OptOps::TC) return -1;
  if (op == OptOps::UNROLL) return py_at(unrollable_dims(), *axis);
  if (op == OptOps::GROUP || op == OptOps::GROUPTOP) return py_at(axes_of({AxisType::REDUCE}), *axis);
  check(*axis < (int64_t)shape_len(), "invalid axis on axis=" + std::to_string(*axis) + " op=" + optops_name(op) +
                                          " self.shape_len=" + std::to_string(shape_len()));
  return *axis;
}

std::optional<std::pair<UOp, UOp>> Scheduler::apply_opt(const Opt& opt, bool append_opt) {
  if (opt.op == OptOps::NOLOCALS) {
    for (AxisType x : axis_types())
      check(x != AxisType::WARP && x != AxisType::LOCAL && x != AxisType::GROUP_REDUCE, "no locals can't have locals");
    if (append_opt) applied_opts.push_back(opt);
    dont_use_locals = true;
    return std::nullopt;
  }
  if (opt.op == OptOps::LOCAL || opt.op == OptOps::GROUP || opt.op == OptOps::GROUPTOP)
    check(ren->has_local, "locals needed for opt");

  int64_t ra = real_axis(opt.op, opt.axis);
  UOp rng = ra >= 0 ? py_at(rngs(), ra) : UOp(Ops::NOOP);

  std::optional<std::pair<UOp, UOp>> ret;
  auto shift_type = [](OptOps o) -> std::optional<AxisType> {
    switch (o) {
      case OptOps::LOCAL:
        return AxisType::LOCAL;
      case OptOps::UPCAST:
        return AxisType::UPCAST;
      case OptOps::UNROLL:
        return AxisType::UNROLL;
      case OptOps::GROUP:
      case OptOps::GROUPTOP:
        return AxisType::GROUP_REDUCE;
      case OptOps::THREAD:
        return AxisType::THREAD;
      default:
        return std::nullopt;
    }
  };
  if (auto nt = shift_type(opt.op)) {
    int64_t amt = opt.arg.py_eq(Arg(0)) ? (int64_t)py_add(rng.vmax(), PyConst(1)).as_int() : (int64_t)opt.arg.as_int();
    bool is_group = opt.op == OptOps::GROUP || opt.op == OptOps::GROUPTOP;
    UOp red = reduceop();
    // copied from kernel.py. prevents METAL compiler hangs
    if (red && (is_group || (group_for_reduces() && opt.op != OptOps::NOLOCALS && opt.op != OptOps::PADTO))) {
      auto fs = full_shape();
      pyint upcast_local_sz = 1;
      for (int64_t a : axes_of({AxisType::UPCAST, AxisType::WARP, AxisType::LOCAL, AxisType::GROUP_REDUCE}))
        upcast_local_sz *= int_of(fs[(size_t)a]);
      pyint smem_sz = amt * upcast_local_sz * red.dtype().itemsize();
      check(smem_sz <= ren->shared_max, "exceeds maximum shared memory size: needs " + pyint_str(smem_sz) + ", max " +
                                            std::to_string(ren->shared_max));
    }
    if (red && is_group) {
      // We currently dont support a group within another rudece, TODO: fix if-contexts
      UOp reduce;
      for (const UOp& u : ast.backward_slice()) {
        if (u.op() != Ops::REDUCE) continue;
        std::vector<UOp> merged;
        for (size_t i = 1; i < u.nsrc(); i++)
          for (const UOp& x : u.src(i).ranges())
            if (!contains(merged, x)) merged.push_back(x);
        if (contains(merged, rng)) {
          reduce = u;
          break;
        }
      }
      if (!reduce) throw Error("IndexError: list index out of range");
      for (const UOp& u : reduce.ranges()) {
        AxisType t = atype(u);
        check(t != AxisType::REDUCE && t != AxisType::UNROLL && t != AxisType::GROUP_REDUCE,
              "cannot have a GROUP_REDUCE inside another reduce");
      }
    }
    AxisType rt = atype(rng);
    if (opt.op == OptOps::UNROLL) {
      check(amt <= 32, "don't unroll more than 32");
      check(rt == AxisType::GROUP_REDUCE || rt == AxisType::REDUCE, "unroll is for GROUP_REDUCE/REDUCE");
    }
    if (opt.op == OptOps::UPCAST) {
      check(ren->target.device == "DSP" || amt <= 16, "don't upcast more than 16");
      check(rt == AxisType::GLOBAL || rt == AxisType::LOCAL || rt == AxisType::WEAK,
            std::string("upcast is for GLOBAL/LOCAL/LOOP, not AxisType.") + axis_type_name(rt));
    }
    if (opt.op == OptOps::LOCAL) {
      check(!dont_use_locals, "can't use locals");
      check(rt == AxisType::GLOBAL || rt == AxisType::WEAK, "local is for globals");
    }
    if (opt.op == OptOps::THREAD) {
      check(ren->has_threads, "target does not support threads");
      check(ren->global_max.has_value() && amt <= (*ren->global_max)[0], "too many threads");
      for (AxisType x : axis_types()) check(x != AxisType::THREAD, "already threaded");
      check(contains(globalizable_rngs(), rng), "can't apply range to this dim");
    }
    if (is_group) {
      for (const Opt& o : applied_opts) check(o.op != OptOps::TC, "no grouping with tensor cores");
      check(!dont_use_locals, "can't use locals");
      check(rt == AxisType::REDUCE, "group is for reduce");
    }
    ret = shift_to(rng, amt, *nt, opt.op == OptOps::GROUPTOP || opt.op == OptOps::THREAD);
  } else if (opt.op == OptOps::TC) {
    check(applied_opts.empty(), "tensor core opts must be first");
    check(opt.axis.has_value(), "tensor core opts must have an axis");
    check(opt.arg.is_tuple() && opt.arg.size() == 3, "tensor core opts must have valid arg");
    int64_t tc_select = (int64_t)opt.arg[0].as_int(), tc_opt = (int64_t)opt.arg[1].as_int(),
            use_tc = (int64_t)opt.arg[2].as_int();
    // the ported renderers have no tensor cores (ren.tensor_cores == [])
    check(-1 <= tc_select && tc_select < 0, "tensor core opts must have valid tc_select");
    check(0 <= tc_opt && tc_opt <= 2, "tensor core opts must have valid tc_opt");
    check(0 < use_tc && use_tc <= 2, "use_tensor_cores value is not valid");
    if (reduceops().empty()) throw KernelOptError("no reduce ops for TensorCore");
    check(false, "no tensor core available");
  } else if (opt.op == OptOps::PADTO) {
    check(rng.src(0).op() == Ops::CONST, "only pad const axes");
    AxisType rt = atype(rng);
    check(rt != AxisType::UPCAST && rt != AxisType::UNROLL, "cannot pad upcasted");
    check(rt != AxisType::THREAD, "cannot pad thread");
    pyint sz = py_add(rng.vmax(), PyConst(1)).as_int(), a = opt.arg.as_int();
    pyint new_sz = (sz + a - 1) / a * a;
    check(sz > new_sz / 4, "pad adds more than quadruple the work");
    UOp replaced_rng(Ops::RANGE, DType(), {sint_to_uop(sint(new_sz), rng.dtype())}, rng.arg());
    std::vector<std::pair<UOp, UOp>> replaces{{rng, replaced_rng}};
    UOp valid = replaced_rng.lt(PyConst(sz));
    UOpSet store_targets;
    if (ast.op() == Ops::STORE) store_targets.insert(ast.src(0));
    for (const UOp& s : ast.backward_slice())
      if (s.op() == Ops::STORE) store_targets.insert(s.src(0));
    for (const UOp& b : bufs()) {
      UOp i = b.src(1).get_idx();
      if (!i.in_backward_slice_with_self(rng)) continue;
      UOp nb = b.with_src({b.src(0), i.valid(valid.bitwise_and(b.src(1).get_valid()))});
      replaces.emplace_back(b,
                            store_targets.count(b) ? nb : valid.where(nb, UOp::const_(PyConst::invalid(), b.dtype())));
    }
    std::string name = "padto " + arg_head_repr(rng) + " " + opt.arg.repr();
    ast = ast.substitute(replaces, name.c_str());
  } else if (opt.op == OptOps::SWAP) {
    auto rs = rngs();
    const UOp& altrng = py_at(rs, (int64_t)opt.arg.as_int());
    check(atype(rng) == AxisType::GLOBAL && atype(altrng) == AxisType::GLOBAL, "swap only for globals");
    auto with_head = [](U headsrc, U x) {
      std::vector<Arg> a(headsrc.arg().items().begin(), headsrc.arg().items().end() - 1);
      a.push_back(x.arg().items().back());
      return x.replace({}, {}, {}, Arg::tuple(a), Arg(1));
    };
    std::string name = "swap " + arg_head_repr(rng) + " " + arg_head_repr(altrng);
    ast = ast.substitute({{rng, with_head(altrng, rng)}, {altrng, with_head(rng, altrng)}}, name.c_str());
    static const PatternMatcher remove_all_tags(
        "remove_all_tags",
        {
            TG_RULE(UPat(GroupOp::all()).named("x"), [](U x) { return x.tag().is_none() ? UOp() : x.rtag(Arg()); }),
        });
    ast = graph_rewrite(ast, remove_all_tags, {.name = "swap remove tags"});
  } else {
    throw KernelOptError(std::string("unsupported opt ") + optops_name(opt.op));
  }
  if (append_opt) applied_opts.push_back(opt);
  return ret;
}

std::vector<UOp> Scheduler::reduceops() const {
  std::vector<UOp> r;
  for (const UOp& x : ast.backward_slice())
    if (x.op() == Ops::REDUCE) r.push_back(x);
  return r;
}
UOp Scheduler::reduceop() const {
  auto red = reduceops();
  if (red.empty()) return UOp();
  return UOp(Ops::REDUCE, DType(), std::vector<UOp>(red[0].src().begin(), red[0].src().end()), red[0].arg());
}
std::vector<UOp> Scheduler::bufs() const {
  std::vector<UOp> r;
  for (const UOp& x : ast.toposort())
    if (x.op() == Ops::INDEX) r.push_back(x);
  std::reverse(r.begin(), r.end());
  return r;
}
std::vector<sint> Scheduler::output_shape() const {
  auto fs = full_shape();
  auto at = axis_types();
  std::vector<sint> r;
  for (size_t i = 0; i < fs.size(); i++)
    r.push_back(at[i] == AxisType::REDUCE || at[i] == AxisType::UNROLL || at[i] == AxisType::GROUP_REDUCE ? sint(1)
                                                                                                          : fs[i]);
  return r;
}
size_t Scheduler::upcasted() const { return axes_of({AxisType::UPCAST, AxisType::UNROLL}).size(); }
size_t Scheduler::group_for_reduces() const { return axes_of({AxisType::GROUP_REDUCE}).size(); }

UOp apply_opts(const UOp& ast, const Renderer& ren, int64_t beam) {
  if (!ast.tag().is_none()) return ast;
  Scheduler k(ast, ren);
  k.convert_loop_to_global();
  const KernelInfo* ki = ast.arg().as<KernelInfo>();
  if (ki && !ki->opts_to_apply.is_none()) {
    for (const Arg& a : ki->opts_to_apply.items()) k.apply_opt(Opt::from_arg(a));
  } else if (beam >= 1) {
    auto [rawbufs, var_vals] = args_from_ast(ast, ren.target.device);
    k = beam_search(k, rawbufs, var_vals, beam, getenv_int("BEAM_ESTIMATE", 1) != 0);
  } else if (!NOOPT.value() && (!ki || ki->applied_opts.items().empty())) {
    // NOTE: hand_coded_optimizations doesn't support multiblock opts yet
    if (!ast.op_in_backward_slice_with_self(OpSet{Ops::STAGE})) k = hand_coded_optimizations(k);
  }
  std::optional<std::string> name;
  if (ki && ki->name != "test") name = ki->name;
  return k.get_optimized_ast(name);
}

}  // namespace tg
