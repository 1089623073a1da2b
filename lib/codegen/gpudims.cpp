#include "lib/codegen/gpudims.h"

#include <algorithm>
#include <cmath>

#include "lib/codegen/helpers.h"
#include "lib/mixin/helpers.h"
#include "lib/uop/kernel_info.h"

namespace tg {

using mixin::operator*;

static pyint dim_max(const sint& d) { return d.is_int() ? d.i() : d.u().vmax().as_int(); }

static std::optional<std::vector<sint>> group_dims(std::vector<sint> dims, const std::vector<pyint>& max_sizes) {
  auto over = [&]() {
    if (dims.size() > max_sizes.size()) return true;
    for (size_t i = 0; i < dims.size() && i < max_sizes.size(); i++)
      if (mixin::truthy(mixin::s_gt(dims[i], sint(max_sizes[i])))) return true;
    return false;
  };
  while (over()) {
    bool merged = false;
    for (size_t i = 0; i < max_sizes.size(); i++) {
      if (i + 1 < dims.size() && dim_max(dims[i]) * dim_max(dims[i + 1]) <= max_sizes[i]) {
        sint m = dims[i] * dims[i + 1];
        dims.erase(dims.begin() + (long)i, dims.begin() + (long)i + 2);
        dims.insert(dims.begin() + (long)i, m);
        merged = true;
        break;
      }
    }
    if (!merged) return std::nullopt;
  }
  return dims;
}

static std::vector<sint> split_dims(const std::vector<sint>& dims, const std::vector<pyint>& max_sizes) {
  bool all_ok = true;
  for (size_t i = 0; i < dims.size() && i < max_sizes.size(); i++)
    if (mixin::truthy(mixin::s_gt(dims[i], sint(max_sizes[i])))) all_ok = false;
  if (all_ok) return dims;
  std::vector<pyint> d;
  for (const sint& x : dims) {
    if (!x.is_int()) throw Error("cannot split a symbolic dim");
    d.push_back(x.i());
  }
  while (d.size() < 3) d.push_back(1);
  for (size_t i = 0; i < d.size(); i++) {
    while (d[i] > max_sizes[i]) {
      pyint div = 1;
      pyint lim = (pyint)std::ceil(std::sqrt((double)d[i]));
      for (pyint c = 2; c <= lim; c++)
        if (d[i] % c == 0) {
          div = c;
          break;
        }
      if (div == 1) throw Error("cannot limit dim");
      d[i] = d[i] / div;
      d[(i + 1) % d.size()] = d[(i + 1) % d.size()] * div;
    }
  }
  std::vector<sint> r;
  size_t n = d[2] == 1 ? 2 : 3;
  for (size_t i = 0; i < n; i++) r.push_back(sint(d[i]));
  return r;
}

static sint prod_from(const std::vector<sint>& v, size_t start) {
  sint p = 1;
  for (size_t i = start; i < v.size(); i++) p = p * v[i];
  return p;
}

std::vector<UOp> get_grouped_dims(const std::string& prefix, const std::vector<sint>& dims0,
                                  const std::optional<std::vector<pyint>>& max_sizes, bool reverse) {
  if (reverse) {
    std::vector<sint> rd(dims0.rbegin(), dims0.rend());
    std::vector<UOp> r = get_grouped_dims(prefix, rd, max_sizes, false);
    std::reverse(r.begin(), r.end());
    return r;
  }
  const std::vector<sint>& dims = dims0;
  std::vector<sint> limited;
  if (!max_sizes)
    limited = dims;
  else {
    // try to group first: (a, b, c, d) -> (ab, c, d)
    auto grouped = group_dims(dims, *max_sizes);
    limited = grouped && !grouped->empty() ? *grouped : dims;
    // check if grouping failed
    if (limited.size() > max_sizes->size()) throw Error("cannot limit dim");
    // try to split up dims: (a,) -> (b, c)
    bool same = limited.size() == dims.size();
    for (size_t i = 0; same && i < dims.size(); i++) same = mixin::s_eq(limited[i], dims[i]);
    if (same) limited = split_dims(dims, *max_sizes);
  }
  std::vector<UOp> raw;
  for (size_t i = 0; i < limited.size(); i++) raw.push_back(UOp::special(limited[i], prefix + std::to_string(i)));
  // flat = sum(idx * prod(limited[i+1:])): python's sum starts from the int 0
  sint flat = 0;
  for (size_t i = 0; i < raw.size(); i++) {
    sint term = mixin::operator*(sint(raw[i]), prod_from(limited, i + 1));
    flat = mixin::operator+(flat, term);
  }
  std::vector<UOp> ret;
  for (size_t i = 0; i < dims.size(); i++) {
    sint v = mixin::floordiv(flat, prod_from(dims, i + 1));
    if (i != 0) v = mixin::mod(v, dims[i]);
    v = mixin::ssimplify(v);
    ret.push_back(v.to_uop());
  }
  return ret;
}

static AxisType atype(const UOp& r) { return r.arg().items().back().as_axis(); }
static Arg arg_head(const UOp& r) {
  const auto& it = r.arg().items();
  return Arg::tuple(std::vector<Arg>(it.begin(), it.end() - 1));
}

static UOp add_gpudims(const Renderer& ctx, const UOp& s) {
  if (s.arg().is_none()) return UOp();
  std::vector<UOp> s_topo = s.toposort();
  for (const UOp& x : s_topo)
    if (x.op() == Ops::SPECIAL) return UOp();

  // get ranges: {arg[0:-1]: range}, later ranges with the same head win (the key keeps its first position)
  std::vector<std::pair<Arg, UOp>> all_ranges;
  auto find = [&](const Arg& k) -> UOp* {
    for (auto& [a, u] : all_ranges)
      if (a.py_eq(k)) return &u;
    return nullptr;
  };
  for (const UOp& x : s_topo)
    if (x.op() == Ops::RANGE) {
      Arg h = arg_head(x);
      if (UOp* u = find(h))
        *u = x;
      else
        all_ranges.emplace_back(h, x);
    }

  // extract global/local dims
  std::vector<Arg> global_dims, local_dims;
  for (const auto& [h, x] : all_ranges) {
    AxisType t = atype(x);
    if (t == AxisType::GLOBAL || t == AxisType::THREAD) global_dims.push_back(h);
    if (t == AxisType::WARP || t == AxisType::LOCAL || t == AxisType::GROUP_REDUCE) local_dims.push_back(h);
  }
  auto by_arg = [](const Arg& a, const Arg& b) { return a.py_cmp(b) < 0; };
  std::stable_sort(global_dims.begin(), global_dims.end(), by_arg);
  std::stable_sort(local_dims.begin(), local_dims.end(), by_arg);
  if (global_dims.empty() && local_dims.empty()) return UOp();

  // get global and local shape
  std::vector<sint> global_shape, local_shape;
  for (const Arg& r : global_dims) global_shape.push_back(find(r)->src(0).ssimplify());
  for (const Arg& r : local_dims) local_shape.push_back(find(r)->src(0).ssimplify());

  // get the idxs
  const KernelInfo* ki = s.arg().as<KernelInfo>();
  std::vector<UOp> idxs;
  if (ctx.has_threads) {
    pyint g0 = global_shape.at(0).is_int() ? global_shape[0].i() : global_shape[0].u().as_int();
    idxs.push_back(UOp::variable("core_id", PyConst(0), PyConst(g0 - 1), dtypes::int32, 1, true).cast(dtypes::weakint));
  } else if (ki && ki->dont_use_locals) {
    if (!local_dims.empty()) throw Error("can't use locals if there's no local dims");
    idxs = get_grouped_dims("idx", global_shape, ctx.global_max, true);
  } else {
    // define indexes for GPU-like execution
    std::vector<UOp> local_idxs = get_grouped_dims("lidx", local_shape, ctx.local_max);
    std::vector<pyint> hw_local;
    for (const UOp& u : local_idxs)
      if (u.op() == Ops::SPECIAL) hw_local.push_back(dim_max(u.src(0).ssimplify()));
    std::optional<std::vector<pyint>> global_max = ctx.global_max;
    if (ctx.global_prod_max) {
      const auto& gpm = *ctx.global_prod_max;
      const auto& gm = ctx.global_max ? *ctx.global_max : gpm;
      std::vector<pyint> hl = hw_local;
      for (int i = 0; i < 3; i++) hl.push_back(1);
      std::vector<pyint> r;
      for (size_t i = 0; i < gm.size() && i < gpm.size() && i < hl.size(); i++)
        r.push_back(std::min(gm[i], gpm[i] / hl[i]));
      global_max = r;
    }
    idxs = get_grouped_dims("gidx", global_shape, global_max, true);
    idxs = cat(std::move(idxs), local_idxs);
  }

  // apply to multiple ranges
  std::vector<Arg> gl = global_dims;
  gl.insert(gl.end(), local_dims.begin(), local_dims.end());
  UOpDict<UOp> subs;
  for (const UOp& r : s_topo) {
    // look for local INDEXes that are not used in the GLOBAL store, then add them as an INVALID
    if (r.op() == Ops::STORE && r.src(0).nsrc() && r.src(0).src(0).addrspace() == AddrSpace::GLOBAL) {
      const UOp& idx = r.src(0);
      std::vector<UOp> idx_ranges = idx.ranges(), missing;
      for (const Arg& rng : local_dims)
        if (!contains(idx_ranges, *find(rng))) missing.push_back(*find(rng));
      if (!missing.empty()) {
        if (idx.nsrc() != 2) throw Error("index has 2 sources");
        std::vector<UOp> eqs;
        for (const UOp& x : missing) eqs.push_back(x.eq(PyConst(0)));
        UOp mask = UOp::uprod_of(eqs);
        subs.set(idx, idx.with_src({idx.src(0), idx.src(1).valid(mask)}));
      }
    }
    if (r.op() != Ops::RANGE) continue;
    Arg h = arg_head(r);
    auto it = std::find_if(gl.begin(), gl.end(), [&](const Arg& a) { return a.py_eq(h); });
    if (it == gl.end()) continue;
    if (atype(r) == AxisType::REDUCE) continue;
    subs.set(r, idxs[(size_t)(it - gl.begin())]);
  }
  std::vector<std::pair<UOp, UOp>> d(subs.items().begin(), subs.items().end());
  return s.substitute(d);
}

const PatternMatcher& pm_add_gpudims() {
  static const PatternMatcher pm =
      PatternMatcher(
          "pm_add_gpudims",
          {
              // add gpudims must be last
              TG_RULE(UPat(Ops::SINK).named("s"), [](const Renderer& ctx, U s) { return add_gpudims(ctx, s); }),
          }) +
      PatternMatcher("pm_device_to_var",
                     {
                         // the DEVICE axis is not a program axis, it's bound per device at launch
                         TG_RULE(UPat(Ops::RANGE).named("r"),
                                 [](U r) {
                                   return atype(r) == AxisType::DEVICE
                                              ? UOp::variable("_device_num", PyConst(0), r.vmax(), r.dtype(), 1, true)
                                              : UOp();
                                 }),
                         // ENDs that closed a DEVICE range no longer close it
                         TG_RULE(UPat(Ops::END).named("e"),
                                 [](U e) {
                                   bool any = false;
                                   for (size_t i = 1; i < e.nsrc(); i++)
                                     if (e.src(i).op() == Ops::PARAM && e.src(i).param_arg()->name == "_device_num")
                                       any = true;
                                   if (!any) return UOp();
                                   std::vector<UOp> src{e.src(0)};
                                   for (size_t i = 1; i < e.nsrc(); i++)
                                     if (e.src(i).op() != Ops::PARAM) src.push_back(e.src(i));
                                   return e.with_src(src);
                                 }),
                     });
  return pm;
}

}  // namespace tg
