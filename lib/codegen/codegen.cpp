#include "lib/codegen/codegen.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "lib/codegen/decomp/dtype.h"
#include "lib/codegen/decomp/op.h"
#include "lib/codegen/decomp/transcendental.h"
#include "lib/codegen/gpudims.h"
#include "lib/codegen/helpers.h"
#include "lib/codegen/late/coalesce.h"
#include "lib/codegen/late/gater.h"
#include "lib/codegen/late/linearizer.h"
#include "lib/codegen/late/program.h"
#include "lib/codegen/late/uop_props.h"
#include "lib/codegen/opt/opt.h"
#include "lib/codegen/opt/postrange.h"
#include "lib/codegen/simplify.h"
#include "lib/mixin/helpers.h"
#include "lib/schedule/indexing.h"
#include "lib/schedule/multi.h"
#include "lib/schedule/rangeify.h"
#include "lib/uop/kernel_info.h"
#include "lib/uop/movement.h"
#include "lib/uop/spec.h"
#include "lib/uop/symbolic.h"
#include "lib/uop/track.h"
#include "lib/uop/weak.h"

namespace tg {

static AxisType atype(const UOp& r) { return r.arg().items().back().as_axis(); }
static PyConst I(pyint v) { return PyConst(v); }

// UOp.addrspace is a recursive property in the reference (computed once per node); passes that ask it of every node
// share one memo for the pass
thread_local AddrSpaceCache* t_addrspace = nullptr;
static std::optional<AddrSpace> addrspace_of(const UOp& u) { return t_addrspace ? t_addrspace->get(u) : u.addrspace(); }
struct AddrSpaceScope {
  AddrSpaceCache cache;
  AddrSpaceCache* prev;
  AddrSpaceScope() : prev(t_addrspace) { t_addrspace = &cache; }
  ~AddrSpaceScope() { t_addrspace = prev; }
};

const PatternMatcher& pm_number_params() {
  static const PatternMatcher pm("pm_number_params",
                                 {
                                     TG_RULE(UPat(Ops::PARAM).named("x"),
                                             [](std::vector<int64_t>& ctx, U x) {
                                               if (x.param_arg()->slot != -1) return UOp();
                                               ctx[0] += 1;
                                               auto* p = new ParamArg(*x.param_arg());
                                               p->slot = ctx[0] - 1;
                                               return x.with_arg(Arg(static_cast<const ArgObj*>(p)));
                                             }),
                                 });
  return pm;
}

// ***** expander *****
const int64_t* RangeMap::find(int64_t k) const {
  for (const auto& [a, b] : m)
    if (a == k) return &b;
  return nullptr;
}
RangeMap build_range_map(const UOp& sink) {
  RangeMap ctx;
  for (const UOp& x : sink.toposort()) {
    if (x.op() != Ops::RANGE || x.arg().size() < 2 || x.arg()[1].kind() != Arg::Kind::Axis) continue;
    AxisType t = x.arg()[1].as_axis();
    if (t != AxisType::UNROLL && t != AxisType::UPCAST) continue;
    int64_t k = (int64_t)x.arg()[0].as_int();
    int64_t v = (int64_t)ctx.m.size();
    bool found = false;
    for (auto& [a, b] : ctx.m)
      if (a == k) b = v, found = true;
    if (!found) ctx.m.emplace_back(k, v);
  }
  return ctx;
}

static bool sint_gt1(const sint& s) { return mixin::truthy(mixin::s_gt(s, sint(1))); }

static UOp expand_reduce(const UOp& r) {
  std::vector<UOp> range_srcs;
  std::vector<int64_t> new_axes;
  for (size_t k = 1; k < r.nsrc(); k++) {
    const UOp& u = r.src(k);
    if (u.op() == Ops::RANGE)
      range_srcs.push_back(u);
    else {
      const Shape& sh = u.shape();
      for (size_t i = 0; i < sh.size(); i++)
        if (sint_gt1(sh[i])) new_axes.push_back((int64_t)i);
    }
  }
  if (new_axes.empty()) return UOp();
  if (r.arg()[1].as_int() != 0) throw Error("expand_reduce of a horizontal reduce");
  const Shape& s0 = r.src(0).shape();
  auto is_new = [&](int64_t i) { return std::find(new_axes.begin(), new_axes.end(), i) != new_axes.end(); };
  std::vector<int64_t> perm = new_axes;
  Shape out_shape;
  for (size_t i = 0; i < s0.size(); i++) {
    if (!is_new((int64_t)i)) perm.push_back((int64_t)i);
    out_shape.push_back(is_new((int64_t)i) ? sint(1) : s0[i]);
  }
  UOp p = r.src(0).permute(perm);
  std::vector<UOp> src{p};
  src.insert(src.end(), range_srcs.begin(), range_srcs.end());
  return UOp(Ops::REDUCE, DType(), src, Arg::tup(r.arg()[0], Arg((long long)new_axes.size()))).reshape(out_shape);
}

const PatternMatcher& expander2() {
  static const PatternMatcher pm =
      PatternMatcher("expander2",
                     {
                         TG_RULE(UPat(Ops::REDUCE).named("r"), [](U r) { return expand_reduce(r); }),
                         TG_RULE(UPat(Ops::RANGE).named("r"),
                                 [](const RangeMap& ctx, U r) {
                                   const int64_t* pos = ctx.find((int64_t)r.arg()[0].as_int());
                                   if (!pos) return UOp();
                                   pyint n = py_add(r.vmax(), PyConst(1)).as_int();
                                   std::vector<UOp> cs;
                                   for (pyint i = 0; i < n; i++) cs.push_back(UOp::const_(I(i), r.dtype()));
                                   Shape shape;
                                   for (size_t i = 0; i < ctx.m.size(); i++)
                                     shape.push_back((int64_t)i == *pos ? sint(n) : sint(1));
                                   return UOp::stack(cs).reshape(shape);
                                 }),
                         TG_RULE(UPat(Ops::WMMA).named("u"),
                                 [](U u) -> UOp {
                                   if (u.arg()[4].is_none()) return UOp();
                                   throw Error("WMMA (tensor cores) is not ported");
                                 }),
                     }) +
      pm_flatten_range() + mop_cleanup();
  return pm;
}

static std::vector<int64_t> argsort_arg(const Arg& a) {
  std::vector<int64_t> idx(a.size());
  for (size_t i = 0; i < idx.size(); i++) idx[i] = (int64_t)i;
  std::stable_sort(idx.begin(), idx.end(),
                   [&](int64_t x, int64_t y) { return a[(size_t)x].as_int() < a[(size_t)y].as_int(); });
  return idx;
}
static std::vector<int64_t> arg_ints(const Arg& a) {
  std::vector<int64_t> r;
  for (const Arg& x : a.items()) r.push_back((int64_t)x.as_int());
  return r;
}

const PatternMatcher& pm_wmma_add() {
  static const PatternMatcher pm(
      "pm_wmma_add",
      {
          TG_RULE(UPat(Ops::WMMA).named("wmma") + UPat::var("add"),
                  [](U add, U wmma) {
                    return UOp(wmma.op(), DType(), {wmma.src(0), wmma.src(1), wmma.src(2) + add}, wmma.arg());
                  }),
          // push permute/reshape to the other side of the add
          TG_RULE(UPat(Ops::PERMUTE).src(UPat(Ops::WMMA).named("wmma")).named("permute") + UPat::var("add"),
                  [](U wmma, U permute, U add) {
                    return (wmma + add.permute(argsort_arg(permute.arg()))).permute(arg_ints(permute.arg()));
                  }),
          TG_RULE(UPat(Ops::PERMUTE)
                          .src(UPat(Ops::RESHAPE).src(UPat(Ops::WMMA).named("wmma"), UPat()).named("reshape"))
                          .named("permute") +
                      UPat::var("add"),
                  [](U wmma, U reshape, U permute, U add) {
                    return (wmma + add.permute(argsort_arg(permute.arg())).reshape(wmma.shape()))
                        .reshape(reshape.shape())
                        .permute(arg_ints(permute.arg()));
                  }),
      });
  return pm;
}

static UOp expand_broadcast(const UOp& x) {
  // the srcs' shapes compared in place: most nodes need no expand, and then no shape is copied
  const Shape* first = nullptr;
  bool same = true;
  for (const UOp& u : x.src()) {
    const std::optional<Shape>& s = u.shape_opt();
    if (!s) return UOp();
    if (!first)
      first = &*s;
    else if (same && !shape_eq(*s, *first))
      same = false;
  }
  if (same) return UOp();
  std::vector<Shape> shapes;
  for (const UOp& u : x.src()) shapes.push_back(*u.shape_opt());
  Shape shape = mixin::broadcast_shape(shapes);
  std::vector<UOp> src;
  for (const UOp& u : x.src()) src.push_back(u.expand(OptShape(shape)));
  return x.with_src(src);
}

const PatternMatcher& pm_expand_broadcast() {
  static const PatternMatcher pm =
      pm_wmma_add() +
      PatternMatcher(
          "pm_expand_broadcast",
          {
              TG_RULE(UPat(GroupOp::Binary | GroupOp::Ternary | OpSet{Ops::STORE}).named("x"),
                      [](U x) { return expand_broadcast(x); }),
              TG_RULE(UPat(Ops::WMMA).named("b"), [](U b) -> UOp { throw Error("WMMA (tensor cores) is not ported"); }),
          });
  return pm;
}

// A lane of a devectorized op indexes each src with constants. devectorizer2's rules take x.index(constants) to a
// fixed point, and the first of them to match an INDEX of a movement op is pm_mops' mop_index
// (Devectorize.AnIndexOfAMovementOpIsFirstMatchedByMopIndex checks this of the matcher). So the lane's src is the end
// of mop_index's chain, made here without the rewrite's intermediate INDEX nodes: through RESHAPE (integer dims),
// EXPAND and PERMUTE as integer index maps planned once for all lanes (what apply_movement_op_direct does to
// constants), then with mop_index on nodes. Only when the rules' steps are neither counted nor recorded.
class LaneChain {
 public:
  explicit LaneChain(const UOp& x) : end_(x) {
    constexpr pyint kLimit = (pyint)1 << 62;  // const_reshape's bounds: larger shapes take the node path
    auto ints = [&](const Shape& sh, std::vector<pyint>& out) {
      pyint prod = 1;
      for (const sint& d : sh) {
        if (!d.is_int() || d.i() <= 0 || d.i() >= kLimit) return false;
        prod *= d.i();
        if (prod >= kLimit) return false;
        out.push_back(d.i());
      }
      return true;
    };
    while (GroupOp::Movement.has(end_.op())) {
      Step st{end_.op()};
      if (end_.op() == Ops::RESHAPE) {
        if (!ints(end_.src(0).shape(), st.in) || !ints(end_.shape(), st.out)) break;
      } else if (end_.op() == Ops::EXPAND) {
        st.added = end_.shape().size() - end_.src(0).shape().size();
      } else if (end_.op() == Ops::PERMUTE) {
        st.order = permute_argsort(end_.arg());
      } else {
        break;
      }
      steps_.push_back(std::move(st));
      end_ = end_.src(0);
    }
  }
  // the lane's src for the constant indices idx (one per dim of x)
  UOp lane(std::span<const pyint> idx) {
    ix_.assign(idx.begin(), idx.end());
    for (const Step& st : steps_) {
      if (st.op == Ops::RESHAPE) {
        pyint combined = 0, acc = 1;
        for (size_t k = st.out.size(); k > 0; k--) combined += acc * ix_[k - 1], acc *= st.out[k - 1];
        ix_.resize(st.in.size());
        for (size_t k = st.in.size(); k > 0; k--) ix_[k - 1] = combined % st.in[k - 1], combined /= st.in[k - 1];
      } else if (st.op == Ops::EXPAND) {
        ix_.erase(ix_.begin(), ix_.begin() + (ptrdiff_t)st.added);
      } else {
        tmp_.clear();
        for (size_t p : st.order) tmp_.push_back(ix_[p]);
        ix_.swap(tmp_);
      }
    }
    consts_.clear();
    for (pyint v : ix_) consts_.push_back(UOp::const_(I(v)));
    UOp lane = end_.index(consts_);
    while (lane.op() == Ops::INDEX && lane.nsrc() > 1 && GroupOp::Movement.has(lane.src(0).op())) {
      for (size_t i = 1; i < lane.nsrc(); i++)
        if (lane.src(i).op() != Ops::CONST) return lane;
      UOp next = mop_index(lane.src(0), lane);
      if (!next) break;
      lane = std::move(next);
    }
    return lane;
  }

 private:
  struct Step {
    Ops op;
    std::vector<pyint> in, out;  // RESHAPE: its src's dims and its own
    std::vector<size_t> order;   // PERMUTE: the argsort of its permutation
    size_t added = 0;            // EXPAND: the dims it adds in front
  };
  std::vector<Step> steps_;
  UOp end_;
  std::vector<pyint> ix_, tmp_;
  std::vector<UOp> consts_;
};

// through_movement: the caller's matcher is devectorizer2's (LaneChain)
// do_devectorize's first test, on the flag alone (a node known to have shape () has nothing to unpack)
static bool not_scalar_at_birth(const UOp& b) {
  return !(b.node()->flags.load(std::memory_order_relaxed) & detail::kScalarShape);
}

static UOp do_devectorize(const UOp& b, bool through_movement = false) {
  through_movement = through_movement && TRACK_MATCH_STATS.value() == 0;
  const Shape& bs = b.shape();
  if (bs.empty()) return UOp();
  // broadcasting needs to be already unpacked, Invalid matches any dtype and shape
  for (const UOp& x : b.src())
    if (!(x.shape_opt() && shape_eq(*x.shape_opt(), bs)) && !x.base().is_invalid()) return UOp();
  std::vector<pyint> dims;
  for (const sint& s : bs) {
    if (!s.is_int()) throw Error("devectorize of a symbolic shape");
    dims.push_back(s.i());
  }
  std::vector<UOp> src;
  std::vector<pyint> idx(dims.size(), 0);
  bool any_zero = std::any_of(dims.begin(), dims.end(), [](pyint d) { return d == 0; });
  std::vector<const UOp*> invalid;  // each src's Invalid base, or null
  for (const UOp& x : b.src()) invalid.push_back(x.base().is_invalid() ? &x.base() : nullptr);
  std::vector<UOp> idx_c(dims.size()), s(b.nsrc());
  std::vector<std::optional<LaneChain>> chains(b.nsrc());
  if (through_movement && !any_zero)
    for (size_t k = 0; k < b.nsrc(); k++)
      if (!invalid[k]) chains[k].emplace(b.src(k));
  while (!any_zero) {
    if (!through_movement)
      for (size_t k = 0; k < idx.size(); k++) idx_c[k] = UOp::const_(I(idx[k]));
    for (size_t k = 0; k < b.nsrc(); k++) {
      if (invalid[k])
        s[k] = *invalid[k];
      else
        s[k] = chains[k] ? chains[k]->lane(idx) : b.src(k).index(idx_c);
    }
    src.push_back(UOp(b.op(), DType(), std::span<const UOp>(s), b.arg(), b.tag()));  // b.replace(src=s, dtype=None)
    // itertools.product order: the last index moves fastest
    size_t k = dims.size();
    while (k > 0 && ++idx[k - 1] == dims[k - 1]) idx[--k] = 0;
    if (k == 0) break;
  }
  if (b.op() == Ops::STORE) return UOp::group(src);
  return UOp::stack(src).reshape(bs);
}

const PatternMatcher& ew_devectorizer() {
  static const PatternMatcher pm(
      "ew_devectorizer", {
                             // unpack broadcasting
                             TG_RULE(UPat(GroupOp::Elementwise).named("b"), [](U b) { return do_devectorize(b); })
                                 .when(not_scalar_at_birth),
                         });
  return pm;
}

const PatternMatcher& devectorizer2() {
  static const PatternMatcher pm =
      mop_cleanup() + pm_mops() +
      PatternMatcher(
          "devectorizer2",
          {
              // unpack broadcasting
              TG_RULE(UPat(GroupOp::Elementwise | OpSet{Ops::LOAD, Ops::STORE}).named("b"),
                      [](U b) { return do_devectorize(b, true); })
                  .when(not_scalar_at_birth),
              // INDEX without src is nothing (TODO: this should be in mop_cleanup)
              TG_RULE(UPat(Ops::INDEX).src(UPat::var("x")), [](U x) { return x; }),
              // unpack WMMA
              TG_RULE(UPat(Ops::WMMA).named("u"), [](U u) -> UOp { throw Error("WMMA (tensor cores) is not ported"); }),
              // stacked INDEX is many INDEX
              TG_RULE(UPat(Ops::INDEX)
                          .src(UPat(ops(Ops::PARAM, Ops::BUFFER)).named("b"), UPat(Ops::STACK).named("s"))
                          .named("x"),
                      [](U b, U s, U x) {
                        std::vector<UOp> r;
                        for (const UOp& u : s.src()) r.push_back(x.with_src({b, u}));
                        return UOp::stack(r);
                      }),
              // INDEX into RESHAPE moves the RESHAPE
              TG_RULE(
                  UPat(Ops::INDEX).src(UPat(ops(Ops::PARAM, Ops::BUFFER)).named("b"), UPat(Ops::RESHAPE).named("s")),
                  [](U b, U s) { return b.index(s.src(0)).reshape(s.shape()); }),
              // RESHAPE a void is removed (hack for AFTER)
              TG_RULE(UPat(Ops::RESHAPE).dtype(dtypes::void_).named("x"), [](U x) { return x.src(0); }),
              // reshape of a single element shaped value to scalar is an index
              TG_RULE(UPat(Ops::RESHAPE).named("x"),
                      [](U x) {
                        const auto& s0 = x.src(0).shape_opt();
                        if (x.src(1).as_shape().empty() && s0 && s0->size() == 1 && (*s0)[0].is_int() &&
                            (*s0)[0].i() == 1)
                          return x.src(0).index(UOp::const_(I(0)));
                        return UOp();
                      }),
              // EXPAND on scalar -> STACK
              TG_RULE(UPat(Ops::EXPAND).src(UPat::var("x"), UPat()).named("out"),
                      [](U x, U out) {
                        pyint n = out.max_numel();
                        const auto& os = out.shape();
                        if (!x.shape().empty() || !(os.size() == 1 && os[0].is_int() && os[0].i() == n)) return UOp();
                        return UOp::stack(std::vector<UOp>((size_t)n, x));
                      }),
          });
  return pm;
}

// ***** reduce *****
static UOp fix_group_for_reduce(const UOp& x) {
  std::vector<UOp> reduce_gfr, reduce_r;
  for (size_t i = 1; i < x.nsrc(); i++) {
    const UOp& u = x.src(i);
    (u.op() == Ops::RANGE && atype(u) == AxisType::GROUP_REDUCE ? reduce_gfr : reduce_r).push_back(u);
  }
  if (reduce_gfr.empty()) return UOp();
  // NOTE: if there's other locals here, we need them in the buffer too
  std::vector<UOp> upstream_locals;
  for (const UOp& u : x.toposort())
    if (u.op() == Ops::RANGE && atype(u) == AxisType::LOCAL) upstream_locals.push_back(u);
  // do only the non grouped reduces early
  UOp ret = x.with_src(cat({x.src(0)}, reduce_r));
  std::vector<UOp> reduce_loop;
  for (const UOp& g : reduce_gfr)
    reduce_loop.push_back(g.with_arg(Arg::tup(Arg((long long)(g.arg()[0].as_int() + 100)), AxisType::REDUCE)));
  BufferizeOpts bo(reduce_gfr[0].arg()[0], AddrSpace::LOCAL);
  UOp buf = UOp(Ops::STAGE, DType(), cat(cat({ret}, upstream_locals), reduce_gfr), bo.to_arg())
                .index(cat(upstream_locals, reduce_loop));
  // do the final reduce (if/barrier are added in gpudims step)
  // NOTE: we remove all horizontal reduces here, they remain in the first reduce
  return UOp(Ops::REDUCE, DType(), cat({buf}, reduce_loop), Arg::tup(x.arg()[0], Arg(0)));
}

static UOp merge_reduce_ends(const UOp& sink) {
  // merge ENDs that share the same range and nesting context (only those created by reduce_to_acc)
  // ENDs at different nesting depths get cloned RANGEs so each RANGE maps to one END
  std::vector<std::pair<std::vector<UOp>, std::vector<UOp>>> range_to_ends;
  std::vector<UOp> bs = sink.backward_slice();
  for (const UOp& u : bs) {
    if (u.op() != Ops::END || !(u.tag().is_str() && u.tag().as_str() == "mergeable")) continue;
    std::vector<UOp> key = srcs_from(u, 1);
    auto it = std::find_if(range_to_ends.begin(), range_to_ends.end(), [&](auto& p) { return p.first == key; });
    if (it == range_to_ends.end()) range_to_ends.push_back({key, {}}), it = range_to_ends.end() - 1;
    it->second.push_back(u);
  }
  UOpDict<UOp> subs;
  int64_t next_axis = -1;
  for (const UOp& u : bs)
    if (u.op() == Ops::RANGE) next_axis = std::max<int64_t>(next_axis, (int64_t)u.arg()[0].as_int());
  next_axis += 1;
  for (const auto& [r, ends] : range_to_ends) {
    if (ends.size() <= 1) continue;
    // by frozenset(e.ranges)
    std::vector<std::pair<std::vector<const void*>, std::vector<UOp>>> by_ctx;
    for (const UOp& e : ends) {
      std::vector<const void*> key;
      for (const UOp& x : e.ranges()) key.push_back(x.node());
      std::sort(key.begin(), key.end());
      auto it = std::find_if(by_ctx.begin(), by_ctx.end(), [&](auto& p) { return p.first == key; });
      if (it == by_ctx.end()) by_ctx.push_back({key, {}}), it = by_ctx.end() - 1;
      it->second.push_back(e);
    }
    for (size_t i = 0; i < by_ctx.size(); i++) {
      const auto& group = by_ctx[i].second;
      std::vector<UOp> tr = r;
      if (i > 0) {
        tr.clear();
        for (size_t j = 0; j < r.size(); j++) {
          std::vector<Arg> a = r[j].arg().items();
          a[0] = Arg((long long)(next_axis + (int64_t)j));
          tr.push_back(r[j].with_arg(Arg::tuple(a)));
        }
        next_axis += (int64_t)r.size();
      }
      std::vector<UOp> mapped;
      for (const UOp& e : group) {
        if (i == 0)
          mapped.push_back(e);
        else {
          std::vector<std::pair<UOp, UOp>> d;
          for (size_t j = 0; j < r.size(); j++) d.emplace_back(r[j], tr[j]);
          mapped.push_back(e.substitute(d));
        }
      }
      UOp merged;
      if (mapped.size() == 1)
        merged = mapped[0];
      else {
        std::vector<UOp> firsts;
        for (const UOp& e : mapped) firsts.push_back(e.src(0));
        merged = UOp::group(firsts).end(tr);
      }
      for (const UOp& e : group) subs.set(e, merged);
    }
  }
  if (subs.empty()) return UOp();
  std::vector<std::pair<UOp, UOp>> d(subs.items().begin(), subs.items().end());
  return sink.substitute(d);
}

static UOp reduce_ranges_to_acc(ReduceContext& ctx, const UOp& r) {
  for (const sint& s : r.shape())
    if (!s.is_int()) throw Error("no placeholder-like on symbolic shape");
  Shape ms;
  for (pyint x : r.max_shape()) ms.push_back(sint(x));
  UOp acc = UOp::placeholder(ms, r.dtype(), ctx.acc_num, AddrSpace::REG);
  ctx.acc_num += 1;
  std::vector<UOp> topo = r.src(0).toposort();
  std::vector<UOp> ended;
  for (const UOp& x : topo)
    if (x.op() == Ops::END) ended = cat(std::move(ended), ended_ranges(x));
  std::vector<UOp> rsrc = srcs_from(r, 1), input_ranges;
  for (const UOp& x : topo)
    if (x.op() == Ops::RANGE && !contains(rsrc, x) && !contains(ended, x)) input_ranges.push_back(x);
  Ops rop = r.arg()[0].as_op();
  UOp acc_init = acc.after(input_ranges).store(UOp::const_(identity_element(rop, r.dtype())));
  UOp acc_initted = acc.after(cat({acc_init}, rsrc));
  UOp inp = r.arg()[1].as_int() ? UOp(Ops::REDUCE, DType(), {r.src(0)}, r.arg()) : r.src(0);
  UOp acc_out = acc_initted.store(acc_initted.alu(rop, inp)).end(rsrc).rtag(Arg("mergeable"));
  return acc.after(acc_out);
}

static UOp expand_horizontal_reduce(const UOp& r) {
  const UOp& inp = r.src(0);
  std::vector<pyint> ms = inp.max_shape();
  int64_t n = (int64_t)r.arg()[1].as_int();
  std::vector<pyint> dims(ms.begin(), ms.begin() + n);
  std::vector<UOp> vals;
  std::vector<pyint> idx(dims.size(), 0);
  bool any_zero = std::any_of(dims.begin(), dims.end(), [](pyint d) { return d == 0; });
  while (!any_zero) {
    std::vector<UOp> ic;
    for (pyint i : idx) ic.push_back(UOp::const_(I(i)));
    vals.push_back(inp.index(ic));
    size_t k = dims.size();
    while (k > 0 && ++idx[k - 1] == dims[k - 1]) idx[--k] = 0;
    if (k == 0) break;
  }
  Ops rop = r.arg()[0].as_op();
  UOp acc = vals.at(0);
  for (size_t i = 1; i < vals.size(); i++) acc = acc.alu(rop, vals[i]);
  return acc;
}

const PatternMatcher& pm_reduce_local() {
  static const PatternMatcher pm =
      pm_wmma_add() +
      PatternMatcher(
          "pm_reduce_local",
          {
              // fix group for reduce
              TG_RULE(UPat(Ops::REDUCE).named("x"), [](U x) { return fix_group_for_reduce(x); }),
              // remove reduces
              TG_RULE(UPat(Ops::REDUCE).src(UPat(), UPat()).any_len().named("r"),
                      [](ReduceContext& ctx, U r) { return reduce_ranges_to_acc(ctx, r); }),
              TG_RULE(UPat(Ops::REDUCE).src(UPat()).named("r"), [](U r) { return expand_horizontal_reduce(r); }),
              TG_RULE(UPat(Ops::SINK).named("sink"), [](U sink) { return merge_reduce_ends(sink); }),
          }) +
      pm_clean_up_group_sink();
  return pm;
}

// ***** loads, local buffers *****
static bool is_shape_changing_bitcast(const UOp& u) {
  if (u.op() != Ops::BITCAST) return false;
  const auto &a = u.shape_opt(), &b = u.src(0).shape_opt();
  if (a.has_value() != b.has_value()) return true;
  return a && !shape_eq(*a, *b);
}
static UOp maybe_load(const UOp& u) {
  auto as = addrspace_of(u);
  return as == AddrSpace::GLOBAL || as == AddrSpace::LOCAL || as == AddrSpace::REG ? u.load() : u;
}

const PatternMatcher& pm_add_loads() {
  static const PatternMatcher pm(
      "pm_add_loads", {
                          TG_RULE(UPat(GroupOp::Elementwise | OpSet{Ops::REDUCE, Ops::WMMA, Ops::STACK}).named("x"),
                                  [](U x) {
                                    if (is_shape_changing_bitcast(x)) return UOp();
                                    std::vector<UOp> s;
                                    for (const UOp& y : x.src()) s.push_back(maybe_load(y));
                                    return x.with_src(s);
                                  }),
                          TG_RULE(UPat(Ops::STORE).named("x"),
                                  [](U x) {
                                    std::vector<UOp> s{x.src(0), maybe_load(x.src(1))};
                                    s.insert(s.end(), x.src().begin() + 2, x.src().end());
                                    return x.with_src(s);
                                  }),
                      });
  return pm;
}

const PatternMatcher& pm_add_local_buffers() {
  static const PatternMatcher pm =
      PatternMatcher("pm_add_local_buffers",
                     {
                         TG_RULE(UPat(Ops::STAGE).named("x"),
                                 [](LocalBufferContext& ctx, U x) {
                                   Shape ms;
                                   for (pyint v : x.max_shape()) ms.push_back(sint(v));
                                   const BufferizeOpts* bo = x.arg().as<BufferizeOpts>();
                                   UOp buf = UOp::placeholder(ms, x.dtype(), ctx.next++,
                                                              bo ? bo->addrspace : AddrSpace::GLOBAL);
                                   std::vector<UOp> rngs = srcs_from(x, 1);
                                   return buf.after(buf.index(rngs).store(x.src(0)).end(rngs));
                                 }),
                     }) +
      pm_mops();
  return pm;
}

// float ALUs need a float operand: make that cast explicit before the decomps
const PatternMatcher& pm_cast_float_alu() {
  static const PatternMatcher pm(
      "pm_cast_float_alu",
      {
          TG_RULE(
              UPat(OpSet{Ops::SIN, Ops::LOG2, Ops::EXP2, Ops::SQRT, Ops::RECIPROCAL}).src(UPat().named("x")).named("u"),
              [](U u, U x) { return x.dtype() != u.dtype() ? u.with_src({x.cast(u.dtype())}) : UOp(); }),
      });
  return pm;
}

// ***** barriers *****
static bool is_local_store(const UOp& x) { return x.op() == Ops::STORE && addrspace_of(x) == AddrSpace::LOCAL; }

static UOp add_raw_barrier(const UOp& after) {
  // loads from a LOCAL buffer that depend (via AFTER) on stores to LOCAL memory need a workgroup barrier
  if (addrspace_of(after) != AddrSpace::LOCAL) return UOp();
  std::vector<UOp> deps = UOp::sink(srcs_from(after, 1)).toposort([](U x) { return x.op() != Ops::BARRIER; });
  if (!std::any_of(deps.begin(), deps.end(), is_local_store)) return UOp();
  return after.src(0).after(UOp(Ops::BARRIER, DType(), srcs_from(after, 1)));
}

static UOp add_war_barrier(const UOp& end) {
  // a LOCAL buffer stored and loaded in the same loop needs a barrier at the end of the loop body
  std::vector<UOp> rngs;
  for (size_t i = 1; i < end.nsrc(); i++) {
    const UOp& r = end.src(i);
    if (r.op() != Ops::RANGE) continue;
    AxisType t = r.arg()[1].kind() == Arg::Kind::Axis ? r.arg()[1].as_axis() : AxisType::PLACEHOLDER;
    if ((t == AxisType::REDUCE || t == AxisType::WEAK || t == AxisType::LOOP) && py_lt(PyConst(0), r.vmax()))
      rngs.push_back(r);
  }
  if (rngs.empty() || end.src(0).op() == Ops::BARRIER) return UOp();
  // no local store in the loop body (every kernel without local buffers): no barrier, without listing the body
  if (!end.src(0).any_in_backward_slice_with_self(is_local_store, OpSet{Ops::STORE})) return UOp();
  std::vector<UOp> sl = cat({end.src(0)}, end.src(0).backward_slice());
  // only stores that are inside this loop body
  UOpSet store_bufs;
  for (const UOp& x : sl) {
    if (!is_local_store(x)) continue;
    std::vector<UOp> xr = x.ranges();
    if (std::any_of(rngs.begin(), rngs.end(), [&](U r) { return contains(xr, r); })) store_bufs.insert(buf_uop(x));
  }
  std::vector<UOp> loads;
  for (const UOp& x : sl)
    if (x.op() == Ops::LOAD && store_bufs.count(buf_uop(x.src(0)))) loads.push_back(x);
  if (loads.empty()) return UOp();
  std::vector<UOp> s{UOp(Ops::BARRIER, DType(), cat({end.src(0)}, loads))};
  s.insert(s.end(), end.src().begin() + 1, end.src().end());
  return end.with_src(s);
}

const PatternMatcher& pm_implicit_barriers() {
  static const PatternMatcher pm(
      "pm_implicit_barriers",
      {
          TG_RULE(UPat(Ops::AFTER).named("after"), [](U after) { return add_raw_barrier(after); }),
          TG_RULE(UPat(Ops::END).named("end"), [](U end) { return add_war_barrier(end); }),
      });
  return pm;
}

const PatternMatcher& pm_casted_consts() {
  static const PatternMatcher pm(
      "pm_casted_consts",
      {
          TG_RULE(UPat(Ops::CONST).dtype(dtypes::all).named("c"),
                  [](U c) { return UOp(Ops::CAST, c.dtype(), {UOp::const_(c.val())}, Arg(c.dtype())); }),
      });
  return pm;
}

// ***** full_rewrite_to_sink *****

// the per-renderer matchers, built once per (code_for_op keys, extra_matcher, flags) like the reference's caches
struct RendererPMs {
  PatternMatcher decomp_early, decomp_late, final_rewrite;
};
static const RendererPMs& renderer_pms(const Renderer& ren) {
  static std::mutex mu;
  static std::map<std::tuple<std::vector<Ops>, const PatternMatcher*, bool, bool>, std::unique_ptr<RendererPMs>> cache;
  std::vector<Ops> ops = ren.code_for_op.keys();
  bool dfi = DISABLE_FAST_IDIV.value() != 0, force = TRANSCENDENTAL.value() >= 2;
  std::lock_guard<std::mutex> lk(mu);
  auto& slot = cache[{ops, ren.extra_matcher, dfi, force}];
  if (!slot) {
    auto p = std::make_unique<RendererPMs>();
    p->decomp_early = symbolic_simple() + get_simplifying_rewrite_patterns(ops);
    p->decomp_late = p->decomp_early + get_late_rewrite_patterns(ops, dfi) + get_transcendental_patterns(ops, force);
    PatternMatcher extra = ren.extra_matcher ? *ren.extra_matcher : PatternMatcher("extra_matcher", {});
    p->final_rewrite =
        pm_commit_weak() + pm_cast_weak() + p->decomp_late + extra + pm_split_ends() + pm_remove_invalid();
    slot = std::move(p);
  }
  return *slot;
}

// a trace or match statistics see every pass: a pass that cannot change the graph is skipped only when neither does
static bool observed() { return track::recording() || TRACK_MATCH_STATS.value() != 0; }

UOp full_rewrite_to_sink(const UOp& ast, const Renderer& ren, bool optimize) {
  static const PatternMatcher empty("empty", {});
  const Renderer* renp = &ren;
  if (VIZ.value()) graph_rewrite(ast, empty, {.name = "View Base AST"});
  if (SPEC.value()) type_verify(ast, spec_tensor());

  // resolve UNSHARDs (multi-device UNSHARDs are already resolved by the scheduler; this handles in-kernel shards)
  UOp sink = graph_rewrite(ast, multi_pm(), {.name = "multi_pm"});

  // preprocess
  sink = graph_rewrite(sink, pm_mops(), {.bottom_up = true, .name = "early movement ops"});

  // first we optimize
  if (optimize) {
    // collapse loads reduce (indexing by a tensor)
    sink = graph_rewrite(sink, pm_load_collapse(), {.name = "load collapse"});
    // split ranges
    static const PatternMatcher split = pm_split_ranges() + pm_flatten_range();
    UOpDict<UOp> sctx;
    sink = graph_rewrite(sink, split, {.ctx = &sctx, .name = "split ranges"});
    // symbolic (NOTE: this is a requirement for pm_simplify_ranges to be correct)
    static const PatternMatcher init_sym = sym() + pm_flatten_range();
    sink = graph_rewrite(sink, init_sym, {.name = "initial symbolic"});
    // optimize (schedule) the AST
    static const PatternMatcher simp = pm_flatten_range() + pm_simplify_ranges();
    UOpDict<UOp> rctx;
    sink = graph_rewrite(sink, simp, {.ctx = &rctx, .name = "simplify ranges"});
    // do postrange optimization, BEAM or hand_coded_optimizations
    const KernelInfo* ki = ast.arg().as<KernelInfo>();
    sink = apply_opts(sink, ren, ki ? ki->beam : 0);
  }

  // ** expander (expand_rewrite) **
  // reduce_unparented: a REDUCE whose src folded to a CONST has no parented ranges, collapse it before the expander
  static const PatternMatcher postopt = sym() + pm_move_where_on_load() + pm_flatten_range() + pm_reduce_unparented();
  sink = graph_rewrite(sink, postopt, {.name = "postopt symbolic"});

  // expand
  RangeMap rmap = build_range_map(sink);
  sink = graph_rewrite(sink, expander2(), {.ctx = &rmap, .name = "expander"});

  // remove reduce
  static const PatternMatcher remove_reduces = mop_cleanup() + pm_reduce_local();
  ReduceContext rctx;
  sink = graph_rewrite(sink, remove_reduces, {.ctx = &rctx, .name = "remove reduces"});

  // add locals
  LocalBufferContext lctx;
  sink = graph_rewrite(sink, pm_add_local_buffers(), {.ctx = &lctx, .name = "add local buffers"});

  // add gpu dims (late). this works after devectorize, but it's faster here
  sink = graph_rewrite(sink, pm_add_gpudims(), {.ctx = renp, .name = "add gpudims"});

  // **** optimizations are done, now we lower to actual code ****
  {
    AddrSpaceScope as;
    static const PatternMatcher eb = symbolic_simple() + pm_expand_broadcast() + pm_add_loads();
    sink = graph_rewrite(sink, eb, {.name = "*** expand broadcast / add loads"});
  }

  // devectorize
  static const PatternMatcher devec = symbolic_simple() + devectorizer2() + indexing_simplify();
  sink = graph_rewrite(sink, devec, {.ctx = renp, .name = "devectorize2"});

  // some coalescing misses without this
  sink = graph_rewrite(sink, sym(), {.name = "early symbolic"});

  // do memory coalescing (late)
  sink = memory_coalescing(sink, ren);
  static const PatternMatcher images = symbolic_simple() + ew_devectorizer() + pm_simplify_add_image();
  sink = graph_rewrite(sink, images, {.bottom_up = true, .name = "add images"});

  // extra symbolic before decomp. crashes without this?
  // NOTE: also run indexing_simplify here, while the index is still weakint and (x+y)*c -> x*c+y*c applies
  static const PatternMatcher extra_sym = sym() + indexing_simplify();
  sink = graph_rewrite(sink, extra_sym, {.name = "extra symbolic"});

  // lower index dtype
  // NOTE: we need indexing_simplify to remove the cast to long using the Invalid
  static const PatternMatcher lower = symbolic_simple() + pm_lower_index_dtype() + indexing_simplify();
  LowerIndexCtx lctx2;
  sink = graph_rewrite(sink, lower, {.ctx = &lctx2, .name = "lower all index dtypes"});

  // final symbolic before decomp
  sink = graph_rewrite(sink, symbolic(), {.name = "final symbolic"});

  sink = graph_rewrite(sink, pm_cast_float_alu(), {.name = "cast float alu operands"});

  // **** decomps ****
  const RendererPMs& pms = renderer_pms(ren);
  // floordiv+mod / dtype decomp (early)
  sink = graph_rewrite(sink, pms.decomp_early, {.name = "early decompositions"});

  // late decomps + move gates from unrenderable INVALID where
  static const PatternMatcher dd = pm_dtype_decomps() + pm_commit_weak();
  DtypeDecompCtx dctx{{}, renp};
  sink = graph_rewrite(sink, dd, {.ctx = &dctx, .name = "decomp dtypes"});
  sink = graph_rewrite(sink, pms.decomp_late, {.ctx = renp, .name = "late decompositions"});
  sink = graph_rewrite(sink, pm_move_gates_from_index(), {.name = "move gates from index"});

  // final rules for the renderer (without sym)
  sink = graph_rewrite(sink, pms.final_rewrite, {.ctx = renp, .name = "final rewrite"});

  // spell every literal as a casted const CAST(dt, CONST(value))
  sink = graph_rewrite(sink, pm_casted_consts(), {.name = "casted consts", .walk = true});

  // add implicit barriers (stores/loads through LOCAL memory ordered by AFTER or across loop iterations)
  {
    AddrSpaceScope as;
    // both rules act on LOCAL memory only, which a node has through a LOCAL PARAM or BUFFER below it: without one the
    // pass changes nothing (the toposort is the one the control flow below walks)
    bool local = observed();
    for (const UOp& x : sink.toposort_borrowed())
      if (!local && (x.op() == Ops::PARAM || x.op() == Ops::BUFFER)) local = addrspace_of(x) == AddrSpace::LOCAL;
    if (local) sink = graph_rewrite(sink, pm_implicit_barriers(), {.name = "add implicit barriers"});
  }

  // this was the linearizer
  CFGContext cfg(sink);
  // the rule orders the RANGEs that have an edge: without one (no sibling or nested loops) the pass changes nothing
  if (!cfg.edges.empty() || observed())
    sink = graph_rewrite(sink, pm_add_control_flow(), {.ctx = &cfg, .bottom_up = true, .name = "add control flow"});

  // put unnumbered variable PARAMs in slots (when there are none, the pass changes nothing)
  int64_t num_params = 0;
  bool unnumbered = observed();
  for (const UOp& x : sink.toposort_borrowed()) {
    if (x.op() != Ops::PARAM) continue;
    if (x.param_arg()->slot != -1)
      num_params++;
    else
      unnumbered = true;
  }
  std::vector<int64_t> nctx{num_params};
  if (unnumbered)
    sink = graph_rewrite(sink, pm_number_params(), {.ctx = &nctx, .name = "number params with -1", .walk = true});

  if (VIZ.value()) graph_rewrite(sink, empty, {.name = "View Output AST"});
  if (SPEC.value()) type_verify(sink, spec_program());
  return sink;
}

UOp to_program(const UOp& ast, const Renderer& ren) {
  if (ast.op() != Ops::SINK) throw Error(std::string("can't call to_program on ") + op_repr(ast.op()));
  if (!ast.arg().as<KernelInfo>()) throw Error("requires KernelInfo on arg to to_program");
  track::Group group("do_to_program");
  SymbolicMemo memo;  // the valid and where-closure rules' results for this kernel's passes (when nothing is counted)
  ToposortMemo topo;  // the final graph is walked by ProgramInfo and the linearizer (and parameter numbering before)
  UOp full_sink = full_rewrite_to_sink(ast, ren, ast.tag().is_none());
  UOp prg = to_program_from_full_sink(full_sink, ren);
  group.set_name(full_sink.arg().as<KernelInfo>()->name);
  return prg;
}

UOp to_program_private(const UOp& ast, const Renderer& ren) {
  // a recorder keeps the nodes it is shown: record the shared ones
  if (VIZ.value() || TRACK_MATCH_STATS.value() >= 2 || recorder() != nullptr) return to_program(ast, ren);
  PrivateNodes scope;
  UOp prg;
  {
    UOp a = import_private(ast);
    prg = to_program(a, ren);
  }
  return adopt_private(std::move(prg));  // the last use of a private node: the scope ends after it
}

}  // namespace tg
