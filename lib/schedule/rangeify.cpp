#include "lib/schedule/rangeify.h"

#include <algorithm>
#include <cstdio>

#include "lib/codegen/codegen.h"
#include "lib/codegen/simplify.h"
#include "lib/mixin/helpers.h"
#include "lib/schedule/helpers.h"
#include "lib/schedule/multi.h"
#include "lib/uop/movement.h"
#include "lib/uop/nodemap.h"
#include "lib/uop/symbolic.h"
#include "lib/uop/track.h"

namespace tg {

ContextVar SPLIT_REDUCEOP("SPLIT_REDUCEOP", 1, 0, 1), DEBUG_RANGEIFY("DEBUG_RANGEIFY", 0, 0, INT64_MAX),
    MAX_KERNEL_BUFFERS("MAX_KERNEL_BUFFERS", 0, 0, INT64_MAX), OPENPILOT_HACKS("OPENPILOT_HACKS", 0, 0, 1),
    FLOAT16("FLOAT16", 0, 0, 1);

using mixin::sprod;

static const BufferizeOpts& bopts(const UOp& b) { return *b.arg().as<BufferizeOpts>(); }
static AxisType axis_of(const UOp& r) { return r.arg().items().back().as_axis(); }
static std::vector<UOp> tail(const UOp& u, size_t from = 1) {
  return std::vector<UOp>(u.src().begin() + std::min(from, u.nsrc()), u.src().end());
}
static bool in_list(const std::vector<UOp>& v, const UOp& u) { return std::find(v.begin(), v.end(), u) != v.end(); }
template <typename T>
static void dedup_push(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

UOp make_call(const UOp& body, std::span<const UOp> srcs) {
  std::vector<UOp> s{body};
  s.insert(s.end(), srcs.begin(), srcs.end());
  return UOp(Ops::CALL, DType(), s, CallInfo().to_arg());
}

// ***** fold moved AFTERs (hack for openpilot) *****

static std::vector<int64_t> argsort_ints(const Arg& a) {
  std::vector<int64_t> v;
  for (const Arg& x : a.items()) v.push_back((int64_t)x.as_int());
  std::vector<int64_t> idx(v.size());
  for (size_t i = 0; i < v.size(); i++) idx[i] = (int64_t)i;
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return v[a] < v[b]; });
  return idx;
}

const PatternMatcher& pm_fold_moved_after() {
  static const PatternMatcher pm(
      "pm_fold_moved_after",
      {
          TG_RULE(
              UPat(Ops::AFTER)
                  .src(
                      UPat(),
                      UPat(Ops::STORE).src(UPat(), UPat(GroupOp::Movement | OpSet{Ops::CAST, Ops::WHERE}).named("src")))
                  .named("after"),
              [](UOpMap<UOp>& ctx, UOp after, const UOp& src) {
                UOp x = src;
                if (x.op() == Ops::CAST && x.dtype() == dtypes::half && FLOAT16) {
                  x = x.src(0);
                  after = after.cast(dtypes::float32);
                }
                while (true) {
                  if (x.op() == Ops::PERMUTE) {
                    after = after.permute(argsort_ints(x.arg()));
                    x = x.src(0);
                  } else if (x.op() == Ops::RESHAPE) {
                    after = after.reshape(x.src(0).shape());
                    x = x.src(0);
                  } else if (x.op() == Ops::WHERE && x.src(2).base().is_invalid() && x.src(1).op() == Ops::PAD) {
                    MArg m = marg(x.src(1));
                    const Shape& s0 = x.src(1).src(0).shape();
                    PadArg sh;
                    for (size_t i = 0; i < s0.size(); i++)
                      sh.emplace_back(m.pairs[i].first, mixin::operator+(s0[i], m.pairs[i].first));
                    UOp nx = x.src(1).src(0);
                    after = after.shrink(sh);
                    x = nx;
                  } else
                    break;
                }
                ctx[x] = after;
                return UOp();
              }),
          // replace ALU sources with AFTER versions found above
          TG_RULE(UPat(GroupOp::ALU).named("alu"),
                  [](UOpMap<UOp>& ctx, U alu) {
                    std::vector<UOp> ns;
                    bool ch = false;
                    for (const UOp& s : alu.src()) {
                      auto it = ctx.find(s);
                      ns.push_back(it == ctx.end() ? s : it->second);
                      ch = ch || it != ctx.end();
                    }
                    return ch ? alu.with_src(ns) : UOp();
                  }),
      });
  return pm;
}

// movement op on INDEX as a PatternMatcher
UOp mop_index(const UOp& r, const UOp& idx) {
  std::vector<UOp> idxs(idx.src().begin() + 1, idx.src().end());
  const Shape& rshape = r.shape();
  const Shape& sshape = r.src(0).shape();
  auto index_with_arg = [&](const std::vector<UOp>& ii) {
    UOp ret = r.src(0).index(ii);
    if (ret.op() == Ops::INDEX && !idx.arg().is_none() && ret.src(0) == r.src(0)) ret = ret.with_arg(idx.arg());
    return ret;
  };
  if (idxs.size() == rshape.size()) {
    if (auto direct = apply_movement_op_direct(r, idxs)) return index_with_arg(*direct);
    return index_with_arg(apply_movement_op(r.op(), sshape, marg(r), idxs));
  }
  if (r.op() == Ops::RESHAPE) {
    int64_t src_prefix = (int64_t)sshape.size() - (int64_t)(rshape.size() - std::min(idxs.size(), rshape.size()));
    if (src_prefix >= 0) {
      Shape a(sshape.begin() + src_prefix, sshape.end());
      Shape b(rshape.begin() + std::min(idxs.size(), rshape.size()), rshape.end());
      if (shape_eq(a, b)) {
        if (src_prefix == 0) return r.src(0).dtype() == idx.dtype() ? r.src(0) : UOp();
        MArg m;
        m.shape = Shape(rshape.begin(), rshape.begin() + std::min(idxs.size(), rshape.size()));
        UOp ret = index_with_arg(
            apply_movement_op(Ops::RESHAPE, Shape(sshape.begin(), sshape.begin() + src_prefix), m, idxs));
        return ret.shape_opt() && idx.shape_opt() && shape_eq(ret.shape(), idx.shape()) ? ret : UOp();
      }
    }
  }
  return UOp();
}

const PatternMatcher& pm_mops() {
  static const PatternMatcher pm(
      "pm_mops", {
                     // handle movement ops on INDEX
                     TG_RULE(UPat(GroupOp::Movement).named("r").f(Ops::INDEX).any_len().named("idx"),
                             [](U r, U idx) { return mop_index(r, idx); }),
                     // move movement ops and INDEX after AFTER
                     TG_RULE(UPat(GroupOp::Movement | OpSet{Ops::INDEX}).named("r").after().named("a").any_len(),
                             [](U r, U a) {
                               std::vector<UOp> asrc{r.src(0)};
                               asrc.insert(asrc.end(), a.src().begin() + 1, a.src().end());
                               std::vector<UOp> src{a.with_src(asrc)};
                               src.insert(src.end(), r.src().begin() + 1, r.src().end());
                               return UOp(r.op(), DType(), src, r.arg());
                             }),
                     TG_RULE(UPat(GroupOp::Movement).named("r").end().named("a").any_len(),
                             [](U r, U a) {
                               std::vector<UOp> asrc{r.src(0)};
                               asrc.insert(asrc.end(), a.src().begin() + 1, a.src().end());
                               return a.with_src(asrc);
                             }),
                 });
  return pm;
}

// ***** 0. cleanup rewrites *****

static UOp fix_store_hazard(const UOp& target, const UOp& src) {
  UOp base = target.base();
  // base in src.toposort(enter_calls=False)
  if (!src.in_backward_slice_with_self(base, false)) return UOp();
  // PERMUTE and FLIP reorder indices, SHRINK can have overlapping regions when dest is also shrunk
  OpSet unsafe{Ops::PERMUTE, Ops::FLIP};
  if (target.op_in_backward_slice_with_self(OpSet{Ops::SHRINK})) unsafe = unsafe | OpSet{Ops::SHRINK};
  if ((src.slice_ops() & unsafe).empty()) return UOp();  // no node of the toposort can be unsafe
  // the nodes that reach base (srcs come first in the toposort); borrowed: the toposort holds them; the set is kept
  // per thread (a training step asks this of ~230 assignments over graphs of thousands of nodes)
  thread_local ClearableRawNodeSet reaches_base(64);
  reaches_base.clear();
  // a node whose slice has no node of base's op cannot reach base: leaving it out of the walk changes nothing else
  // (the nodes below it lack that op too, and the order of the others is kept)
  const Ops bop = base.op();
  for (const UOp& s : src.toposort([bop](U s) { return s.op() != Ops::CONTIGUOUS && s.slice_ops().has(bop); })) {
    bool r = s == base;
    for (size_t i = 0; i < s.nsrc() && !r; i++) r = reaches_base.contains(s.src(i).node());
    if (!r) continue;
    reaches_base.insert(s.node());
    if (unsafe.has(s.op()) && !(s == target && s.op() == Ops::SHRINK)) return target.store(src.contiguous());
  }
  return UOp();
}

static UOp split_reduceop(const UOp& reduce, const UOp& x) {
  sint rprod = sprod(reduce.shape());
  if (rprod.is_int() && rprod.i() == 0) return UOp();
  if (!SPLIT_REDUCEOP || !mixin::all_int(x.shape())) return UOp();
  pyint xprod = sprod(x.shape()).i(), rp = rprod.i();
  if (xprod / rp < getenv_int("REDUCEOP_SPLIT_THRESHOLD", 32768)) return UOp();
  // get expanded by rangeifying the UOp x
  std::vector<UOp> idx;
  const Shape& xs = x.shape();
  for (size_t i = 0; i < xs.size(); i++)
    idx.push_back(mixin::resolve(mixin::s_gt(xs[i], sint(1))) ? UOp::range(xs[i], (int64_t)i)
                                                              : UOp::const_(PyConst(0)));
  UOp indexed = x.index(idx);
  std::vector<int64_t> range_nums;
  for (const UOp& y : indexed.substitute({{x.base(), UOp(Ops::NOOP)}}, nullptr, false, false, &pm_mops()).ranges())
    range_nums.push_back((int64_t)y.arg()[0].as_int());
  auto expanded = [&](size_t i) {
    return std::find(range_nums.begin(), range_nums.end(), (int64_t)i) == range_nums.end();
  };
  int64_t nred = x.nsrc() ? (int64_t)reduce.arg()[1].as_int() : 0;
  int64_t hi = std::min<int64_t>(256, (((int64_t)1) << getenv_int("REDUCEOP_SPLIT_SIZE", 22)) / rp);
  int64_t dim_to_split = -1, divisor = 0;
  for (int64_t i = 0; i < nred && dim_to_split < 0; i++)
    for (int64_t d = hi; d > 8 - 1; d--)
      if (xs[i].i() % d == 0 && !expanded((size_t)i)) {
        dim_to_split = i, divisor = d;
        break;
      }
  if (dim_to_split < 0) return UOp();
  Shape splitted_shape(xs.begin(), xs.begin() + dim_to_split);
  splitted_shape.push_back(divisor);
  splitted_shape.push_back(xs[dim_to_split].i() / divisor);
  splitted_shape.insert(splitted_shape.end(), xs.begin() + dim_to_split + 1, xs.end());
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < (int64_t)splitted_shape.size(); d++)
    if (d != dim_to_split) perm.push_back(d);
  perm.push_back(dim_to_split);
  UOp splitted = x.reshape(splitted_shape).permute(perm);
  if (DEBUG >= 3)
    std::printf("split %lld: %s -> %s -> %s\n", (long long)divisor, mixin::shape_str(x.shape()).c_str(),
                mixin::shape_str(splitted.shape()).c_str(), mixin::shape_str(reduce.shape()).c_str());
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < nred; i++) axes.push_back(i);
  Ops rop = reduce.arg()[0].as_op();
  return splitted.rop(rop, axes).contiguous().rop(rop, {(int64_t)reduce.shape().size()}).reshape(reduce.shape());
}

static const PatternMatcher& pm_gather_params() {
  static const PatternMatcher pm("pm_gather_params", {
                                                         TG_RULE(UPat(Ops::PARAM).named("p"),
                                                                 [](std::vector<UOp>& ctx, U p) {
                                                                   if (p.param_arg()->slot >= 0) ctx.push_back(p);
                                                                   return UOp();
                                                                 }),
                                                     });
  return pm;
}

// resolve FUNCTION calls (inline the body)
static UOp resolve_function(const UOp& c) {
  if (auto* ci = c.arg().as<CallInfo>(); ci && ci->precompile) return UOp();
  std::vector<UOp> params;
  graph_rewrite(c.src(0), pm_gather_params(), {.ctx = &params, .bottom_up = true, .name = "gather params"});
  std::stable_sort(params.begin(), params.end(), [](U a, U b) { return a.param_arg()->slot < b.param_arg()->slot; });
  // NOTE: unused args are fine (allow_param_mismatch)
  std::vector<std::pair<UOp, UOp>> dict_map;
  for (const UOp& p : params) {
    bool seen = false;
    for (const auto& [k, v] : dict_map) seen = seen || k == p;
    if (seen) continue;
    size_t slot = (size_t)p.param_arg()->slot;
    if (slot + 1 >= c.nsrc()) throw Error("resolve_function: PARAM slot " + std::to_string(slot) + " has no argument");
    dict_map.emplace_back(p, c.src(slot + 1));
  }
  for (size_t i = 0; i < dict_map.size(); i++) {
    const auto& [p, a] = dict_map[i];
    std::string arg = "arg " + std::to_string(i);
    if (max_shape(p) != max_shape(a))
      throw Error(arg + " shape mismatch: expected " + mixin::shape_str(p.shape()) + ", got " +
                  mixin::shape_str(a.shape()));
    if (p.dtype() != a.dtype())
      throw Error(arg + " dtype mismatch: expected " + p.dtype().repr() + ", got " + a.dtype().repr());
  }
  return c.src(0).substitute(dict_map, nullptr, true);
}

// shape-changing bitcast
static DType uint_of(int bytes) {
  switch (bytes) {
    case 1:
      return dtypes::uint8;
    case 2:
      return dtypes::uint16;
    case 4:
      return dtypes::uint32;
    default:
      return dtypes::uint64;
  }
}
static bool disk_like(const Arg& d) {
  return d.is_str() && (d.as_str().rfind("DISK", 0) == 0 || d.as_str().rfind("TINYFS", 0) == 0);
}
static UOp expand_bitcast(const UOp& bc) {
  const UOp& x = bc.src(0);
  int ns = bc.dtype().itemsize(), os = x.dtype().itemsize();
  if (ns == os || disk_like(x.device())) return UOp();
  DType new_uint = uint_of(ns);
  UOp tmp = x.bitcast(uint_of(os));
  const Shape& xs = x.shape();
  if (ns > os) {
    int rate = ns / os;
    Shape s(xs.begin(), xs.end() - 1);
    s.push_back(mixin::floordiv(xs.back(), sint(rate)));
    s.push_back(rate);
    tmp = tmp.reshape(s);
    std::vector<UOp> parts;
    for (int i = 0; i < rate; i++) {
      PadArg sh(tmp.shape().size() - 1, std::nullopt);
      sh.emplace_back(sint(i), sint(i + 1));
      parts.push_back(tmp.shrink(sh).cast(new_uint).lshift(8 * i * os));
    }
    return parts[0].usum(std::vector<UOp>(parts.begin() + 1, parts.end())).squeeze(-1).bitcast(bc.dtype());
  }
  std::vector<UOp> parts;
  for (int i = 0; i < os / ns; i++) parts.push_back(tmp.rshift(8 * i * ns));
  return UOp::stack(parts, -1).flatten(-2).cast(new_uint).bitcast(bc.dtype());
}

static bool shape_has_zero(const UOp& x) {
  if (!x.shape_opt()) return false;
  for (const sint& s : *x.shape_opt())
    if (s.is_int() && s.i() == 0) return true;
  return false;
}

const PatternMatcher& earliest_rewrites() {
  static const PatternMatcher pm =
      mop_cleanup() +
      PatternMatcher(
          "earliest_rewrites",
          {
              // resolve FUNCTION calls (inline the body)
              TG_RULE(UPat(Ops::FUNCTION).named("c"), [](U c) { return resolve_function(c); }),
              // resolve TUPLE+GETTUPLE
              TG_RULE(UPat(Ops::GETTUPLE).src(UPat(Ops::TUPLE).named("t")).named("g"),
                      [](U g, U t) { return t.src((size_t)g.arg().as_int()); }),
              // resolve allreduce: multi-device, not ported (allreduce.py is out of scope)
              TG_RULE(UPat(Ops::ALLREDUCE).src(UPat::var("buf")).named("red"),
                      [](U buf, U red) -> UOp { throw Error("ALLREDUCE (multi-device) is not ported"); }),
              // split_reduceop
              TG_RULE(UPat(Ops::REDUCE).named("reduce").src(UPat::var("x")),
                      [](U reduce, U x) { return split_reduceop(reduce, x); }),
              // remove DETACH/CONTIGUOUS_BACKWARD
              TG_RULE(UPat(OpSet{Ops::DETACH, Ops::CONTIGUOUS_BACKWARD}).named("x"), [](U x) { return x.src(0); }),
              // SINK only ever references the base
              TG_RULE(UPat(Ops::SINK).named("x"),
                      [](U x) {
                        std::vector<UOp> s;
                        for (const UOp& y : x.src()) s.push_back(unsharded_base(y));
                        return x.with_src(s);
                      }),
              // ** copy rules **
              // COPY transfers a contiguous range, so materialize a source that's resized or reordered
              TG_RULE(UPat(Ops::COPY).src(UPat(GroupOp::Movement).named("r")).named("c"),
                      [](U c, U r) {
                        bool resized = mixin::resolve(mixin::s_ne(r.numel(), r.base().numel()), false);
                        if (resized || !contiguous_view_offset(r)) return c.with_src({r.contiguous()});
                        return UOp();
                      }),
              // copy to same device is a no-op
              TG_RULE(UPat(Ops::COPY).src(UPat::var("x")).named("copy"),
                      [](U x, U copy) { return x.device().py_eq(copy.device()) ? x : UOp(); }),
              // copy on reshape is reshape on copy
              TG_RULE(UPat(Ops::COPY).src(UPat(Ops::RESHAPE).named("shp")).named("cpy"),
                      [](U shp, U cpy) { return copy_to_device(shp.src(0), cpy.device()).reshape(shp.shape()); }),
              // reshaping on STORE can be a NOOP
              TG_RULE(UPat(Ops::STORE)
                          .src(UPat(Ops::RESHAPE).src(UPat::var("dst")).any_len(),
                               UPat(Ops::RESHAPE).src(UPat::var("src")).any_len()),
                      [](U dst, U src) { return shape_eq(dst.shape(), src.shape()) ? dst.store(src) : UOp(); }),
              // ** store rules **
              // fix store hazard (dest is in used in src) by adding contiguous: TestAssign.test_post_flipped_assignment
              TG_RULE(UPat(Ops::STORE).src(UPat().named("target"), UPat().named("src")),
                      [](U target, U src) { return fix_store_hazard(target, src); }),
              // remove two STOREs that store the same thing to the same place: TestSchedule.test_dedup_assign
              TG_RULE(UPat::var("buf")
                          .after(UPat::var("buf").store(UPat::var("src")))
                          .named("a1")
                          .after(UPat::var("a1").store(UPat::var("src"))),
                      [](U buf, U src, U a1) { return a1; }),
              // store a buffer's own current contents back into itself:
              // TestAssign.test_nested_after_contiguous_store_no_init
              TG_RULE(UPat::var("buf").after(UPat::var("buf").store(
                          UPat::var("buf").after(UPat::var("buf").store(UPat::var("src"))).named("a1"))),
                      [](U buf, U src, U a1) { return a1; }),
              // move bitcast from store dest to source: TestAssign.test_assign_bitcast
              TG_RULE(UPat(Ops::STORE).src(UPat(Ops::BITCAST).src(UPat().named("target")), UPat().named("src")),
                      [](U target, U src) { return target.store(src.bitcast(target.dtype())); }),
              TG_RULE(UPat(Ops::BITCAST).named("bc"), [](U bc) { return expand_bitcast(bc); }),
              // ** size 0 **
              // reduce of size 0 is the identity element
              TG_RULE(UPat(Ops::REDUCE).named("reduce").src(UPat::var("x")),
                      [](U reduce, U x) {
                        if (shape_has_zero(x) && !shape_has_zero(reduce))
                          return reduce.const_like(identity_element(reduce.arg()[0].as_op(), reduce.dtype()));
                        return UOp();
                      }),
              // handle size 0
              TG_RULE(UPat(GroupOp::all() - OpSet{Ops::SINK}).named("x"),
                      [](U x) { return shape_has_zero(x) ? x.const_like(0).rtag(x.tag()) : UOp(); }),
          });
  return pm;
}

// ***** 3.5 cleanups *****

static bool always_run(Ops op) { return op == Ops::CONTIGUOUS || op == Ops::NOOP; }

// you don't know in the first pass if axes are going to die, this happens if there's an EXPAND to the left
static UOp cleanup_dead_axes(const UOp& b) {
  if (!bopts(b).removable) return UOp();
  if (always_run(b.src(0).op()) || b.src(0).op() == Ops::AFTER) return UOp();
  std::vector<UOp> new_rng;
  bool hit = false;
  Shape reshape;
  const Shape& bs = b.shape();
  std::vector<UOp> src_ranges = b.src(0).ranges();
  for (size_t i = 0; i < bs.size() && i + 1 < b.nsrc(); i++) {
    const UOp& rng = b.src(i + 1);
    // skip for symbolic
    if (rng.op() == Ops::RANGE && rng.src(0).op() != Ops::CONST) return UOp();
    if (rng.op() == Ops::CONST || (rng.op() == Ops::RANGE && !in_list(src_ranges, rng))) {
      reshape.push_back(1);
      hit = true;
    } else {
      reshape.push_back(bs[i]);
      new_rng.push_back(rng);
    }
  }
  if (!hit) return UOp();
  std::vector<UOp> s{b.src(0)};
  s.insert(s.end(), new_rng.begin(), new_rng.end());
  return b.with_src(s).reshape(reshape).expand(OptShape(bs));
}

const PatternMatcher& pm_gate_substitute() {
  static const PatternMatcher pm("pm_gate_substitute", {
                                                           TG_RULE(UPat(GroupOp::all()).named("b"),
                                                                   [](UOpMap<UOp>& ctx, U b) -> UOp {
                                                                     std::vector<UOp> br = b.ranges();
                                                                     for (const auto& [k, v] : ctx)
                                                                       if (in_list(br, k)) return UOp();
                                                                     request_bottom_up_gate();
                                                                     return UOp();
                                                                   }),
                                                       });
  return pm;
}

// if a buffer is being stored just for permutes or something, remove it
static UOp remove_bufferize(const UOp& src, const UOp& buf, const UOp& idx) {
  if (buf.nsrc() != idx.nsrc()) throw Error("index on wrong bufferize");
  if (always_run(src.op()) || !bopts(buf).removable) return UOp();
  std::vector<UOp> accessed_buffers, indexes, reduces;
  auto red_gate = [&](U x) {
    if (x.op() == Ops::AFTER) {
      accessed_buffers.push_back(buf_uop(x));
      return false;
    }
    if ((x.op() == Ops::STAGE && bopts(x).addrspace == AddrSpace::GLOBAL) || x.op() == Ops::MSTACK) {
      accessed_buffers.push_back(x);
      return false;
    }
    if (x.op() == Ops::STORE) return false;
    if (x.op() == Ops::PARAM) accessed_buffers.push_back(x);
    if (x.op() == Ops::INDEX) indexes.push_back(x);
    if (x.op() == Ops::REDUCE) reduces.push_back(x);
    return true;
  };
  src.toposort(red_gate);
  std::vector<UOp> ab;
  for (const UOp& u : accessed_buffers) dedup_push(ab, u);
  if (ab.size() > 3 && !(PCONTIG > 2)) return UOp();
  // if any reduces access a buffer, don't remove this buffer
  bool buffer_in_reduce = false;
  std::vector<UOp> rs;
  for (const UOp& r : reduces) rs.push_back(r.src(0));
  UOp::sink(rs).toposort([&](U x) {
    if (x.op() == Ops::PARAM || x.op() == Ops::STAGE || x.op() == Ops::AFTER) buffer_in_reduce = true;
    return !buffer_in_reduce;
  });
  if (buffer_in_reduce) {
    if (!(PCONTIG > 2)) return UOp();
    sint bprod = sprod(buf.shape());
    pyint in_total = 0;
    for (const UOp& x : ab) {
      sint n = x.numel();
      if (!n.is_int() || !bprod.is_int()) return UOp();  // symbolic sizes: keep the buffer
      in_total += n.i();
    }
    double out_in_ratio = (double)(bprod.i() + 1) / (double)(in_total + 1);
    if (out_in_ratio < 10) return UOp();
    // here we have to check the indexes, we might do a partial contig here
    std::vector<UOp> groups;
    for (const UOp& x : indexes)
      if (x.src(0).op() == Ops::STAGE && bopts(x.src(0)).addrspace == AddrSpace::LOCAL) {
        std::vector<UOp> g(x.src().begin() + 1, x.src().end());
        groups.push_back(UOp::group(g));
      }
    std::vector<UOp> exclude_ranges = UOp::group(groups).ranges();
    std::vector<std::pair<UOp, UOp>> is_pcontig, is_subs;
    for (size_t i = 1; i < buf.nsrc() && i < idx.nsrc(); i++) {
      const UOp &k = buf.src(i), &v = idx.src(i);
      if (k.op() == Ops::CONST) continue;
      bool pc = in_list(exclude_ranges, k);
      for (const UOp& r : v.ranges()) pc = pc || axis_of(r) == AxisType::REDUCE;
      (pc ? is_pcontig : is_subs).emplace_back(k, v);
    }
    if (is_subs.empty()) return UOp();
    if (!is_pcontig.empty()) {
      UOp ret = src.substitute(is_subs, nullptr, false, false, &pm_gate_substitute());
      std::vector<UOp> bsrc{ret}, isrc;
      for (const auto& [k, v] : is_pcontig) bsrc.push_back(k), isrc.push_back(v);
      return UOp(Ops::STAGE, DType(), bsrc, bufferize_opts(Arg(), AddrSpace::LOCAL)).index(isrc);
    }
  }
  // the ranges replaced. NOTE: if buf src is a const, we don't replace it. if idx is Invalid (dead load), neither
  std::vector<std::pair<UOp, UOp>> replaced;
  for (size_t i = 1; i < buf.nsrc(); i++) {
    const UOp& k = buf.src(i);
    const UOp& v = idx.src(i);
    if (k.op() != Ops::CONST && !(v.op() == Ops::CONST && v.is_invalid())) replaced.emplace_back(k, v);
  }
  return src.substitute(replaced, nullptr, false, false, &pm_gate_substitute());
}

static UOp remove_noop_bufferize(const UOp& idx, const UOp& b2) {
  if (idx.nsrc() != b2.nsrc()) return UOp();
  for (size_t i = 1; i < idx.nsrc(); i++)
    if (!(idx.src(i) == b2.src(i))) return UOp();
  if (b2.shape().empty()) return idx.src(0);
  PadArg sh;
  for (const sint& s : b2.shape()) sh.emplace_back(sint(0), s);
  return idx.src(0).shrink(sh);
}

static bool after_all_invalid(const UOp& after) {
  UOp buf = buf_uop(after.src(0));
  for (size_t i = 1; i < after.nsrc(); i++) {
    const UOp& s = after.src(i);
    if (s.op() != Ops::END) return false;
    const UOp& st = s.src(0);
    if (st.op() != Ops::STORE || !st.src(1).base().is_invalid() || !(buf_uop(st.src(0)) == buf)) return false;
    std::vector<UOp> er = ended_ranges(s), sr = st.src(0).ranges();
    for (const UOp& r : er)
      if (!in_list(sr, r)) return false;
    std::vector<UOp> ends;
    for (const UOp& r : er) ends.push_back(r.src(0));
    UOp p = py_prod(ends);
    sint n = buf.numel();
    if (!mixin::resolve(mixin::SBool(p.eq(n.is_int() ? UOp::const_(PyConst(n.i())) : n.u())), false)) return false;
  }
  return true;
}

const PatternMatcher& pm_const_buffer_folding() {
  static const PatternMatcher pm =
      pm_mops() +
      PatternMatcher("pm_const_buffer_folding",
                     {
                         TG_RULE(UPat(Ops::STAGE).named("b"), [](U b) { return cleanup_dead_axes(b); }),
                         // remove noop buffers. if we look at the next index we can remove even more of these
                         TG_RULE(UPat(Ops::INDEX).named("idx").f(Ops::STAGE).any_len().named("b2"),
                                 [](U idx, U b2) { return remove_noop_bufferize(idx, b2); }),
                         TG_RULE(UPat(Ops::INDEX)
                                     .src(UPat(Ops::STAGE))
                                     .any_len()
                                     .named("idx")
                                     .f(Ops::NOOP)
                                     .f(Ops::STAGE)
                                     .any_len()
                                     .named("b2"),
                                 [](U idx, U b2) { return remove_noop_bufferize(idx, b2); }),
                         // no buffers for const
                         TG_RULE(UPat(Ops::CONST).named("c").f(Ops::STAGE).any_len().named("b"),
                                 [](U c, U b) { return b.const_like(c.val()); }),
                         // indexing a const is a const
                         TG_RULE(UPat(Ops::INDEX).src(UPat(Ops::CONST).named("c")), [](U c) { return c; }),
                         // indexing an after with all fully invalid stores is invalid
                         TG_RULE(UPat(Ops::INDEX).src(UPat(Ops::AFTER).named("after")).any_len().named("idx"),
                                 [](U idx, U after) {
                                   return after_all_invalid(after) ? idx.const_like(PyConst::invalid()) : UOp();
                                 }),
                         // hack if a noop turned to a const
                         TG_RULE(UPat(Ops::NOOP).src(UPat::cvar("c")), [](U c) { return c; }),
                         // a deviceless MSTACK src is the same value on every device
                         TG_RULE(UPat(Ops::MSTACK).src(UPat::var("s")).any_len().f(Ops::INDEX).any_len().named("idx"),
                                 [](U s, U idx) {
                                   if (!s.device().is_none()) return UOp();
                                   std::vector<UOp> src{s};
                                   for (size_t i = 1; i < idx.nsrc(); i++) src.push_back(idx.src(i));
                                   return idx.with_src(src);
                                 }),
                     });
  return pm;
}

const PatternMatcher& pm_remove_bufferize() {
  static const PatternMatcher pm(
      "pm_remove_bufferize",
      {
          // remove reindexing with cost function
          TG_RULE(UPat::var("src").f(Ops::STAGE).any_len().named("buf").f(Ops::INDEX).any_len().named("idx"),
                  [](U src, U buf, U idx) { return remove_bufferize(src, buf, idx); }),
          // STORE to self is NOOP
          TG_RULE(UPat::var("x").store(UPat::var("x")), [](U x) { return UOp(Ops::NOOP); }),
          // END on NOOP is NOOP
          TG_RULE(UPat(Ops::END).src(UPat(Ops::NOOP).named("x")).any_len(), [](U x) { return x; }),
      });
  return pm;
}

static UOp strip_zero_offset_shrink(const UOp& x) {
  if (x.op() != Ops::SHRINK) return x;
  for (const auto& [start, _] : marg(x).pairs)
    if (!mixin::resolve(mixin::SBool(start.is_int() ? start.i() == 0 : false), false)) return x;
  return x.src(0);
}

const PatternMatcher& pm_no_indexing_calls() {
  static const PatternMatcher pm("pm_no_indexing_calls",
                                 {
                                     TG_RULE(UPat(Ops::CALL).named("u"),
                                             [](U u) {
                                               std::vector<UOp> ns;
                                               for (const UOp& x : u.src()) {
                                                 // sometimes if call srcs have children the call will get
                                                 // an INDEX. we remove it here.
                                                 // TODO: we should add safety checks here for contiguous
                                                 if (x.op() == Ops::INDEX)
                                                   ns.push_back(x.src(0));
                                                 else if (x.op() == Ops::SHRINK)  // offset 0 is fine
                                                   ns.push_back(strip_zero_offset_shrink(x));
                                                 else if (x.op() == Ops::MSTACK) {
                                                   std::vector<UOp> ms;
                                                   for (const UOp& s : x.src())
                                                     ms.push_back(strip_zero_offset_shrink(s));
                                                   ns.push_back(x.with_src(ms));
                                                 } else
                                                   ns.push_back(x);
                                               }
                                               return u.with_src(ns);
                                             }),
                                 });
  return pm;
}

// DEVICE_MAX_BUFS. TODO (reference): get from device?
static int64_t device_max_bufs(const std::string& d) {
  if (d == "METAL") return 31;
  if (d == "WEBGPU") return 8;
  if (d == "CPU") return 31;
  return 0;
}

static UOp limit_bufs(LimitBufsContext& ctx, const UOp& root) {
  Arg device = root.device();
  if (device.is_none()) return UOp();
  std::string dev = device.is_str() ? device.as_str() : device[0].as_str();
  if (auto c = dev.find(':'); c != std::string::npos && !device.is_str()) dev = dev.substr(0, c);
  int64_t max_bufs = MAX_KERNEL_BUFFERS.value() ? MAX_KERNEL_BUFFERS.value() : device_max_bufs(dev);
  if (!max_bufs) return UOp();
  // topovisit with the shared cache
  std::vector<std::pair<UOp, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [node, visited] = stack.back();
    stack.pop_back();
    if (ctx.buf_cache.count(node)) continue;
    if (!visited) {
      stack.emplace_back(node, true);
      for (size_t i = node.nsrc(); i > 0; i--) stack.emplace_back(node.src(i - 1), false);
    } else {
      Ops o = node.op();
      std::shared_ptr<const UOpSet> r;
      if (o == Ops::STAGE || o == Ops::AFTER || o == Ops::PARAM || o == Ops::MSELECT || o == Ops::MSTACK)
        r = std::make_shared<UOpSet>(UOpSet{node});
      else if (node.nsrc() == 1)
        r = ctx.buf_cache.at(node.src(0));
      else {
        auto s = std::make_shared<UOpSet>();
        for (const UOp& c : node.src()) s->insert(ctx.buf_cache.at(c)->begin(), ctx.buf_cache.at(c)->end());
        r = s;
      }
      ctx.buf_cache[node] = r;
    }
  }
  if ((int64_t)ctx.buf_cache.at(root)->size() <= max_bufs - 1) return UOp();  // -1 is for the output buffer
  std::vector<UOp> srcs;
  for (UOp s : root.src()) {
    if (GroupOp::Elementwise.has(s.op()) && !s.device().is_none()) {
      std::vector<UOp> orig_ranges = s.ranges(), end_ranges;
      std::vector<std::pair<UOp, UOp>> sub;
      for (const UOp& x : orig_ranges) {
        UOp e = x;
        if (x.op() == Ops::RANGE && axis_of(x) != AxisType::DEVICE)
          e = x.with_arg(Arg::tup(ctx.range_idx++, AxisType::WEAK));
        end_ranges.push_back(e);
        sub.emplace_back(x, e);
      }
      std::vector<UOp> bs{s.substitute(sub)};
      bs.insert(bs.end(), end_ranges.begin(), end_ranges.end());
      s = UOp(Ops::STAGE, DType(), bs, bufferize_opts(s.device())).index(orig_ranges);
    }
    srcs.push_back(s);
  }
  return root.with_src(srcs);
}

const PatternMatcher& pm_limit_bufs() {
  static const PatternMatcher pm("pm_limit_bufs",
                                 {
                                     TG_RULE(UPat(GroupOp::Binary | GroupOp::Ternary).named("root"),
                                             [](LimitBufsContext& ctx, U root) { return limit_bufs(ctx, root); }),
                                 });
  return pm;
}

// ***** 4. put in buffers for bufferize *****
// TODO (reference): should BUFFERIZE look a lot more like STORE
// BUFFERIZE has device in arg
// BUFFERIZE doesn't have indexing, that's implied by the ranges it closes
// BUFFERIZE returns the BUFFER ready for INDEXing (doing this will make splitting a lot easier)
// NOTE: this has been fixed up a bit

static UOp shape_arg1(pyint size) { return UOp::const_(PyConst(size)); }

static UOp bufferize_to_store(int64_t& ctx, const UOp& x, const UOp& idx, bool allow_locals) {
  sint size = sprod(x.shape());
  DType dtype = strong_dtype(x.dtype());
  std::vector<UOp> rngs = idx.ranges();
  std::stable_sort(rngs.begin(), rngs.end(), [](U a, U b) { return a.arg().py_cmp(b.arg()) < 0; });
  if (!size.is_int() || size.i() <= 0) throw Error("no zero sized or symbolic sized buffers " + size.str());
  // AFTER: add END to the existing STORE, return buffer with kernel dependency
  if (const UOp& after = x.src(0); after.op() == Ops::AFTER) {
    UOp buf = buf_uop(after.src(0)).base();
    std::vector<UOp> stores;
    for (size_t i = 1; i < after.nsrc(); i++)
      if (after.src(i).op() == Ops::STORE && after.src(i).src(0).op() == Ops::INDEX) stores.push_back(after.src(i));
    if (stores.empty()) return buf;
    std::vector<UOp> ended_stores;
    for (const UOp& store : stores) {
      UOp store_target = store.src(0);
      if (store_target.src(0).op() == Ops::STAGE && store_target.src(0).src(0).op() == Ops::INDEX)
        store_target = store_target.src(0).src(0);
      if (store.src(1) == store_target) continue;  // skip self-assign
      std::vector<UOp> end_rngs;
      for (const UOp& r : store_target.ranges()) dedup_push(end_rngs, r);
      for (const UOp& r : rngs) dedup_push(end_rngs, r);
      std::stable_sort(end_rngs.begin(), end_rngs.end(), [](U a, U b) { return a.arg().py_cmp(b.arg()) < 0; });
      ended_stores.push_back(store_target.store(store.src(1)).end(end_rngs));
    }
    return buf.after(ended_stores);
  }
  const BufferizeOpts& o = bopts(x);
  // NOTE: the local BUFFER needs to be disambiguated here
  if (o.addrspace == AddrSpace::GLOBAL) {
    auto* p = new ParamArg();
    p->slot = ctx++;
    p->dtype = dtype;
    p->device = o.device;
    p->addrspace = AddrSpace::GLOBAL;
    UOp buf = UOp(Ops::BUFFER, DType(), {shape_arg1(size.i())}, Arg(static_cast<const ArgObj*>(p)));
    UOp do_store = buf.index(idx).store(x.src(0).cast(dtype)).end(rngs);
    return buf.after(do_store).cast(x.dtype());
  }
  if (allow_locals) {
    UOp buf = UOp::placeholder({size}, dtype, ctx++, AddrSpace::LOCAL);
    UOp do_store = buf.index(idx).store(x.src(0).cast(dtype)).end(rngs);
    return buf.after(do_store).cast(x.dtype());
  }
  return UOp();
}

// collapse any BUFFERIZE to single input BUFFERIZE
static UOp flatten_bufferize(const UOp& x) {
  if (x.nsrc() == 2) return UOp();
  MArg m;
  m.shape = x.shape();
  std::vector<UOp> rngs = tail(x);
  std::vector<UOp> flat = apply_movement_op(Ops::RESHAPE, {sprod(x.shape())}, m, rngs);
  if (flat.size() != 1) throw Error("flatten_bufferize: expected a single range");
  UOp ret = x.with_src({x.src(0), flat[0]}).reshape(x.shape());
  bool sym = false;
  for (const UOp& r : rngs)
    if (r.op() == Ops::RANGE && r.src(0).op() != Ops::CONST) sym = true;
  if (sym) {
    PadArg sh;
    for (const UOp& r : rngs) sh.emplace_back(sint(0), r.op() != Ops::CONST ? sint(r.src(0)) : sint(1));
    ret = ret.shrink(sh);
  }
  return ret;
}

const PatternMatcher& pm_flatten_bufferize() {
  static const PatternMatcher pm("pm_flatten_bufferize",
                                 {TG_RULE(UPat(Ops::STAGE).named("x"), [](U x) { return flatten_bufferize(x); })});
  return pm;
}

static bool is_noop_after_dep(const UOp& x) {
  return (x.op() == Ops::NOOP && x.nsrc() == 0) || (x.op() == Ops::END && is_noop_after_dep(x.src(0)));
}

static UOp remove_noop_afters(const UOp& x) {
  std::vector<UOp> src{x.src(0)};
  for (size_t i = 1; i < x.nsrc(); i++)
    if (!is_noop_after_dep(x.src(i))) src.push_back(x.src(i));
  if (src.size() != x.nsrc()) return src.size() == 1 ? src[0] : x.with_src(src);
  return UOp();
}

const PatternMatcher& pm_add_buffers() {
  static const PatternMatcher pm =
      pm_mops() + pm_flatten_bufferize() +
      PatternMatcher(
          "pm_add_buffers",
          {
              TG_RULE(UPat(Ops::STAGE).src(UPat(), UPat().named("idx")).named("x"),
                      [](int64_t& ctx, U x, U idx) { return bufferize_to_store(ctx, x, idx, false); }),
              // INDEX of a buffer through the weak cast added above: index the buffer directly and cast the loaded
              // value
              TG_RULE(
                  UPat(Ops::INDEX).src(UPat(Ops::CAST).dtype(dtypes::weaks).src(UPat::var("buf"))).any_len().named("u"),
                  [](U u, U buf) {
                    std::vector<UOp> s{buf};
                    for (size_t i = 1; i < u.nsrc(); i++) s.push_back(u.src(i));
                    return UOp(u.op(), DType(), s, u.arg(), u.tag()).cast(u.dtype());
                  }),
              // move RESHAPEs through MSELECT/MSTACK
              TG_RULE(UPat(OpSet{Ops::MSELECT, Ops::MSTACK}).src_all(UPat(Ops::RESHAPE)).named("m"),
                      [](U m) {
                        std::vector<UOp> s;
                        for (const UOp& x : m.src()) s.push_back(x.src(0).base());
                        return m.with_src(s).reshape(m.shape());
                      }),
              // remove any RESHAPEs on KERNEL
              TG_RULE(UPat(Ops::CALL).named("k"),
                      [](U k) {
                        std::vector<UOp> s;
                        for (const UOp& x : k.src()) s.push_back(x.op() == Ops::RESHAPE ? x.src(0) : x);
                        return k.with_src(s);
                      }),
              // remove invalid writes
              TG_RULE(UPat(Ops::STORE).src(UPat(), UPat(Ops::CONTIGUOUS).src(UPat(Ops::CONST).arg(Arg::invalid()))),
                      []() { return UOp(Ops::NOOP); }),
              TG_RULE(UPat(Ops::STORE).src(UPat(), UPat(Ops::CONST).arg(Arg::invalid())),
                      []() { return UOp(Ops::NOOP); }),
              TG_RULE(UPat(Ops::AFTER).named("x"), [](U x) { return remove_noop_afters(x); }),
          });
  return pm;
}

// ***** 5. split into kernels *****

static UOp debuf(LocalAddBufferContext& ctx, const UOp& buf) {
  // Variables are scalar symbolic values, not real buffers: they become ALU params with no slot
  if (buf.is_variable()) return buf.replace(Ops::PARAM);
  auto* p = new ParamArg();
  p->slot = ctx.dg;
  p->dtype = buf.dtype();
  std::optional<AddrSpace> as = addrspace(buf);
  p->has_addrspace = as.has_value();
  p->addrspace = as.value_or(AddrSpace::GLOBAL);
  p->device = buf.device();
  std::vector<pyint> ms = max_shape(buf);
  pyint n = 1;
  for (pyint v : ms) n *= v;
  UOp param = UOp(Ops::PARAM, DType(), {UOp::const_(PyConst(n))}, Arg(static_cast<const ArgObj*>(p)));
  Shape mshape(ms.begin(), ms.end());
  UOp ret = param.reshape(mshape);
  // if the buffer has symbolic shape, shrink the max-sized view to the actual shape
  if (!shape_eq(mshape, buf.shape())) {
    PadArg sh;
    for (const sint& s : buf.shape()) sh.emplace_back(sint(0), s);
    ret = ret.shrink(sh);
  }
  if (!ctx.find(buf)) ctx.map.emplace_back(buf, buf);
  ctx.dg += 1;
  return ret;
}

static UOp handle_after(LocalAddBufferContext& ctx, const UOp& after) {
  if (addrspace(after) == AddrSpace::LOCAL) return UOp();
  UOp buf = buf_uop(after);
  // NOTE: this is bottom up, so we only add it once
  if (!ctx.find(buf)) ctx.map.emplace_back(buf, after);
  return buf;
}

static UOp renumber_range(LocalAddBufferContext& ctx, const UOp& r) {
  if (!(r.tag().is_tuple() && r.tag().size() == 0)) return UOp();
  std::vector<Arg> a{Arg(ctx.range)};
  for (size_t i = 1; i < r.arg().size(); i++) a.push_back(r.arg()[i]);
  ctx.range += 1;
  return r.replace({}, {}, {}, Arg::tuple(a), Arg());
}

static UOp find_bufs(const UOp& x) {
  std::vector<std::pair<UOp, Ops>> read_from;
  for (const UOp& idx : x.toposort([](U u) { return u.op() != Ops::AFTER; })) {
    if (idx.op() != Ops::INDEX) continue;
    UOp buf = buf_uop(idx);
    if (buf.op() != Ops::BUFFER && buf.op() != Ops::PARAM) continue;
    Ops op = idx.src(0).op();
    bool found = false;
    for (const auto& [b, o] : read_from)
      if (b == buf) {
        found = true;
        if (o != op) throw Error("cycle detected while indexing " + buf.repr());
      }
    if (!found) read_from.emplace_back(buf, op);
  }
  return UOp();
}

static bool is_empty_tuple(const Arg& t) { return t.is_tuple() && t.size() == 0; }

const PatternMatcher& to_define_global() {
  static const PatternMatcher pm(
      "to_define_global",
      {
          TG_RULE(UPat(Ops::STORE).named("x"), [](U x) { return find_bufs(x); }),
          TG_RULE(UPat(OpSet{Ops::BUFFER, Ops::MSTACK, Ops::MSELECT}).named("buf"),
                  [](LocalAddBufferContext& ctx, U buf) { return debuf(ctx, buf); }),
          TG_RULE(UPat(Ops::PARAM).named("v"),
                  [](U v) {
                    const ParamArg* p = v.param_arg();
                    if (!p->has_name || !p->has_vminmax || p->slot == -1) return UOp();
                    auto* n = new ParamArg(*p);
                    n->slot = -1;
                    return v.with_arg(Arg(static_cast<const ArgObj*>(n)));
                  }),
          // this renumbers the params
          TG_RULE(UPat(Ops::PARAM).named("buf"),
                  [](LocalAddBufferContext& ctx, U buf) {
                    if (!is_empty_tuple(buf.tag()) || buf.param_arg()->has_name || !buf.shape_opt()) return UOp();
                    return debuf(ctx, buf);
                  }),
          // ALU params are scalar symbolic values, not buffers.
          TG_RULE(UPat(Ops::INDEX).src(UPat(Ops::PARAM).named("v")),
                  [](U v) { return addrspace(v) == AddrSpace::ALU ? v : UOp(); }),
          // bound Variables are stores into Variable buffers: strip the store
          TG_RULE(UPat(Ops::AFTER).named("b"), [](U b) { return b.is_bound_var() ? b.src(0) : UOp(); }),
          TG_RULE(UPat(Ops::AFTER).named("after"),
                  [](LocalAddBufferContext& ctx, U after) { return handle_after(ctx, after); }),
          // remove device from local BUFFERIZE
          TG_RULE(UPat(Ops::STAGE).named("b"),
                  [](U b) { return b.with_arg(bufferize_opts(Arg(), bopts(b).addrspace, bopts(b).removable)); }),
          // renumber the ranges starting with 0 so that kernel deduping works
          TG_RULE(UPat(Ops::RANGE).named("r"), [](LocalAddBufferContext& ctx, U r) { return renumber_range(ctx, r); }),
      });
  return pm;
}

const PatternMatcher& rangeify_codegen() {
  static const PatternMatcher pm(
      "rangeify_codegen", {
                              TG_RULE(UPat(Ops::CONTIGUOUS).named("x"),
                                      [](LocalAddBufferContext& ctx, U x) {
                                        // a tuple of Opts (the reference checks isinstance Opt; an Opt arg is a tuple
                                        // (op, axis, arg) here)
                                        if (x.arg().is_tuple() && x.arg().size() > 0 && x.arg()[0].is_tuple())
                                          ctx.opts = x.arg();
                                        return x.src(0);
                                      }),
                              // no NOOP in the kernel graph. TODO (reference): this can be moved into codegen?
                              TG_RULE(UPat(Ops::NOOP).named("x"), [](U x) { return x.nsrc() ? x.src(0) : UOp(); }),
                          });
  return pm;
}

const PatternMatcher& pm_add_param_range_tags() {
  static const PatternMatcher pm("pm_add_param_range_tags", {
                                                                TG_RULE(UPat(OpSet{Ops::PARAM, Ops::RANGE}).named("x"),
                                                                        [](U x) { return x.rtag(Arg::tuple({})); }),
                                                            });
  return pm;
}

static UOp split_store(const UOp& x) {
  // if we have any open ranges here, we don't split. open DEVICE ranges are fine
  for (const UOp& r : x.ranges())
    if (axis_of(r) != AxisType::DEVICE) return UOp();
  // the store of a bound Variable is an input value, not a kernel
  const UOp& st = x.op() == Ops::END ? x.src(0) : x;
  if (st.op() == Ops::STORE && st.src(0).is_variable()) return UOp();
  LocalAddBufferContext lctx;
  static const PatternMatcher pm = to_define_global() + pm_flatten_range() + rangeify_codegen();
  UOp ret = graph_rewrite(x, pm, {.ctx = &lctx, .bottom_up = true, .name = "kernel split"});
  KernelInfo ki;
  ki.opts_to_apply = lctx.opts;
  std::vector<UOp> args;
  for (const auto& [k, v] : lctx.map) args.push_back(v);
  return make_call(UOp::sink({ret}, ki.to_arg()), args);
}

const PatternMatcher& split_kernels() {
  static const PatternMatcher pm(
      "split_kernels", {
                           TG_RULE(UPat(OpSet{Ops::STORE, Ops::END}).named("x"), [](U x) { return split_store(x); }),
                       });
  return pm;
}

static UOp convert_copy_to_store(int64_t& ctx, const UOp& copy, const UOp& existing_buf) {
  UOp input_src = copy.src(0);
  if (!input_src.has_buffer_identity(true)) input_src = input_src.contiguous();
  input_src = input_src.flatten();
  if (existing_buf) {
    // if the existing buffer is not a full buffer, we can't use it
    if (!existing_buf.has_buffer_identity(true)) return UOp();
    return existing_buf.flatten().store(input_src);
  }
  auto* p = new ParamArg();
  p->slot = ctx++;
  p->dtype = copy.dtype();
  p->device = copy.device();
  std::vector<pyint> ms = max_shape(input_src);
  Shape mshape(ms.begin(), ms.end());
  UOp sarg = mshape.size() == 1 ? UOp::const_(PyConst(ms[0])) : UOp::sink({}).with_src({});  // replaced below
  if (mshape.size() != 1) {
    std::vector<UOp> s;
    for (pyint v : ms) s.push_back(UOp::const_(PyConst(v)));
    sarg = UOp(Ops::STACK, DType(), s);
  }
  UOp buf = UOp(Ops::BUFFER, DType(), {sarg}, Arg(static_cast<const ArgObj*>(p)));
  return buf.after(buf.store(input_src)).reshape(copy.shape());
}

const PatternMatcher& pm_copy_to_store() {
  static const PatternMatcher pm(
      "pm_copy_to_store",
      {
          TG_RULE(UPat().named("existing_buf").store(UPat(Ops::COPY).named("copy")),
                  [](int64_t& ctx, U existing_buf, U copy) { return convert_copy_to_store(ctx, copy, existing_buf); }),
          TG_RULE(UPat(Ops::COPY).named("copy"),
                  [](int64_t& ctx, U copy) { return convert_copy_to_store(ctx, copy, UOp()); }),
      });
  return pm;
}

UOp get_kernel_graph(const UOp& sink) {
  // rewrite_group(new_ctx=False): a step of its own in the trace
  track::Step step("get_kernel_graph", std::source_location::current(), sink, false, false, false);
  // prepare for rangeify
  UOp tsink = graph_rewrite(sink, multi_pm(), {.name = "multi_pm"});
  if (OPENPILOT_HACKS) {
    UOpMap<UOp> ctx;
    tsink = graph_rewrite(tsink, pm_fold_moved_after(), {.ctx = &ctx, .name = "fold moved afters"});
  }
  static const PatternMatcher early = pm_mops() + earliest_rewrites();
  tsink = graph_rewrite(tsink, early, {.bottom_up = true, .name = "earliest rewrites"});
  {
    int64_t cnt = 0;
    tsink = graph_rewrite(tsink, pm_copy_to_store(), {.ctx = &cnt, .bottom_up = true, .name = "convert copy to store"});
  }
  // convert movement ops to ranges
  tsink = run_rangeify(tsink, DEBUG_RANGEIFY.value() != 0);

  // cleanups for speed and runability
  static const PatternMatcher cleanup =
      symbolic() + pm_reduce_simplify() + pm_const_buffer_folding() + pm_remove_bufferize();
  tsink = graph_rewrite(tsink, cleanup, {.name = "symbolic+reduce_collapse+debuf"});
  int64_t next_range = -1;
  for (const UOp& x : tsink.toposort())
    if (x.op() == Ops::RANGE) next_range = std::max<int64_t>(next_range, (int64_t)x.arg()[0].as_int());
  LimitBufsContext lbc;
  lbc.range_idx = next_range + 1;
  tsink = graph_rewrite(tsink, pm_limit_bufs(), {.ctx = &lbc, .name = "limit buffers"});
  static const PatternMatcher empty("empty", {});
  if (VIZ) graph_rewrite(tsink, empty, {.name = "View Rangeify"});

  // bufferize -> store
  int64_t paramarg_start = 0;
  for (const UOp& x : tsink.toposort())
    if (x.op() == Ops::BUFFER && x.param_arg() && addrspace(x) == AddrSpace::GLOBAL)
      paramarg_start = std::max<int64_t>(paramarg_start, x.param_arg()->slot + 1);
  static const PatternMatcher add_buffers = pm_add_buffers() + pm_add_param_range_tags();
  tsink = graph_rewrite(tsink, add_buffers, {.ctx = &paramarg_start, .bottom_up = true, .name = "stage to store"});
  tsink = graph_rewrite(tsink, split_kernels(), {.bottom_up = true, .name = "split kernels"});
  tsink = graph_rewrite(tsink, pm_no_indexing_calls(), {.name = "remove indexing from call args"});
  if (VIZ) graph_rewrite(tsink, empty, {.name = "View Kernel Graph"});
  // SPEC: spec_kernel_graph (uop/spec.py) is not ported yet, so the kernel graph is not type-verified here
  step.done(tsink);
  return tsink;
}

}  // namespace tg
