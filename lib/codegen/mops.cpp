#include "lib/codegen/mops.h"

#include <mutex>

#include "lib/mixin/helpers.h"
#include "lib/uop/symbolic.h"

namespace tg {

using mixin::s_eq;

MArg marg(const UOp& u) {
  MArg m;
  switch (u.op()) {
    case Ops::RESHAPE:
    case Ops::EXPAND:
      m.shape = u.src(1).as_shape();
      break;
    case Ops::PAD:
    case Ops::SHRINK: {
      Shape a = u.src(1).as_shape(), b = u.src(2).as_shape();
      for (size_t i = 0; i < a.size() && i < b.size(); i++) m.pairs.emplace_back(a[i], b[i]);
      break;
    }
    case Ops::PERMUTE:
    case Ops::FLIP:
      m.tuple = u.arg();
      break;
    default:
      throw Error(std::string(op_repr(u.op())) + " is not a MovementOp");
  }
  return m;
}

namespace {
struct ReshapeKey {
  Shape in, out;
  UOp u;
  bool operator==(const ReshapeKey& o) const { return u == o.u && shape_eq(in, o.in) && shape_eq(out, o.out); }
};
struct ReshapeKeyHash {
  size_t operator()(const ReshapeKey& k) const {
    size_t h = k.u.ptr_hash();
    for (const Shape* s : {&k.in, &k.out}) {
      h = h * 1000003 + s->size();
      for (const sint& x : *s) h = h * 31 + (x.is_int() ? std::hash<int64_t>()((int64_t)x.i()) : x.u().ptr_hash());
    }
    return h;
  }
};
}  // namespace

UOp apply_reshape(const Shape& in_shape, const Shape& out_shape, const UOp& urngs) {
  static std::mutex mu;
  static std::unordered_map<ReshapeKey, UOp, ReshapeKeyHash> cache;
  ReshapeKey key{in_shape, out_shape, urngs};
  {
    std::lock_guard<std::mutex> lk(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  sint acc = 1;
  std::vector<UOp> axes_in;
  size_t n = std::min(out_shape.size(), urngs.nsrc());
  for (size_t k = n; k > 0; k--) {
    const sint& s = out_shape[k - 1];
    const UOp& src = urngs.src(k - 1);
    axes_in.push_back(acc.is_int() ? src.mul(PyConst(acc.i()), true) : acc.u() * src);
    acc = mixin::operator*(acc, s);
  }
  UOp combined = UOp::const_(PyConst(0)).usum(axes_in);
  std::vector<UOp> axes_out;
  for (size_t k = in_shape.size(); k > 0; k--) {
    const sint& s = in_shape[k - 1];
    axes_out.push_back(s.is_int() ? combined.mod(PyConst(s.i())) : combined.mod(s.u()));
    combined = s.is_int() ? combined.floordiv(PyConst(s.i())) : combined.floordiv(s.u());
  }
  std::reverse(axes_out.begin(), axes_out.end());
  static const PatternMatcher pm = symbolic() + pm_simplify_valid() + pm_drop_and_clauses();
  UOp ret = graph_rewrite(UOp::sink(axes_out), pm, {.name = "reshape"});
  std::lock_guard<std::mutex> lk(mu);
  return cache.emplace(std::move(key), ret).first->second;
}

std::vector<UOp> apply_movement_op(Ops op, const Shape& in_shape, const MArg& arg, const std::vector<UOp>& rngs) {
  std::vector<UOp> r;
  switch (op) {
    case Ops::SHRINK:
      for (size_t i = 0; i < rngs.size() && i < arg.pairs.size(); i++) {
        const sint& off = arg.pairs[i].first;
        if (off.is_int() && off.i() == 0)
          r.push_back(rngs[i]);
        else
          r.push_back(rngs[i].add(off));
      }
      return r;
    case Ops::PERMUTE: {
      const auto& items = arg.tuple.items();
      std::vector<size_t> order(items.size());
      for (size_t i = 0; i < order.size(); i++) order[i] = i;
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return items[a].as_int() < items[b].as_int(); });
      for (size_t p : order) r.push_back(rngs[p]);
      return r;
    }
    case Ops::FLIP: {
      const auto& items = arg.tuple.items();
      for (size_t i = 0; i < rngs.size() && i < in_shape.size() && i < items.size(); i++) {
        if (!items[i].as_bool()) {
          r.push_back(rngs[i]);
          continue;
        }
        const sint& s = in_shape[i];
        r.push_back(s.is_int() ? rngs[i].sub(PyConst(s.i() - 1), true) : (s.u() - UOp::const_(PyConst(1))) - rngs[i]);
      }
      return r;
    }
    case Ops::EXPAND:
      for (size_t i = arg.shape.size(); i < rngs.size(); i++) r.push_back(rngs[i]);
      return r;
    case Ops::PAD: {
      static const PatternMatcher pm = symbolic() + pm_simplify_valid();
      for (size_t i = 0; i < rngs.size() && i < in_shape.size() && i < arg.pairs.size(); i++) {
        const sint& sh = in_shape[i];
        const sint& off = arg.pairs[i].first;
        const sint& sz = arg.pairs[i].second;
        const UOp& x = rngs[i];
        if (s_eq(sz, sh) && off.is_int() && off.i() == 0) {
          r.push_back(x);
          continue;
        }
        UOp cond = x.ge(off).bitwise_and(x.lt(mixin::operator+(sh, off)));
        UOp v = graph_rewrite(cond, pm, {.name = "pad"});
        r.push_back(x.sub(off).valid(v));
      }
      return r;
    }
    case Ops::RESHAPE: {
      UOp sink = UOp::sink(rngs).simplify();
      std::vector<std::pair<UOp, UOp>> sub, unsub;
      auto rs = sink.ranges();
      for (size_t i = 0; i < rs.size(); i++) {
        UOp p = rs[i].replace({}, {}, std::vector<UOp>{rs[i].src(0)}, Arg::tup((int64_t)i, AxisType::PLACEHOLDER));
        sub.emplace_back(rs[i], p);
        unsub.emplace_back(p, rs[i]);
      }
      UOp out = apply_reshape(in_shape, arg.shape, sink.substitute(sub)).substitute(unsub);
      return std::vector<UOp>(out.src().begin(), out.src().end());
    }
    default:
      throw Error(std::string(op_repr(op)) + " is not a MovementOp");
  }
}

// movement op on INDEX as a PatternMatcher
static UOp mop_index(const UOp& r, const UOp& idx) {
  std::vector<UOp> idxs(idx.src().begin() + 1, idx.src().end());
  const Shape& rshape = r.shape();
  const Shape& sshape = r.src(0).shape();
  auto index_with_arg = [&](const std::vector<UOp>& ii) {
    UOp ret = r.src(0).index(ii);
    if (ret.op() == Ops::INDEX && !idx.arg().is_none() && ret.src(0) == r.src(0)) ret = ret.with_arg(idx.arg());
    return ret;
  };
  if (idxs.size() == rshape.size()) return index_with_arg(apply_movement_op(r.op(), sshape, marg(r), idxs));
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
                             [](UOp r, UOp idx) { return mop_index(r, idx); }),
                     // move movement ops and INDEX after AFTER
                     TG_RULE(UPat(GroupOp::Movement | OpSet{Ops::INDEX}).named("r").after().named("a").any_len(),
                             [](UOp r, UOp a) {
                               std::vector<UOp> asrc{r.src(0)};
                               asrc.insert(asrc.end(), a.src().begin() + 1, a.src().end());
                               std::vector<UOp> src{a.with_src(asrc)};
                               src.insert(src.end(), r.src().begin() + 1, r.src().end());
                               return UOp(r.op(), DType(), src, r.arg());
                             }),
                     TG_RULE(UPat(GroupOp::Movement).named("r").end().named("a").any_len(),
                             [](UOp r, UOp a) {
                               std::vector<UOp> asrc{r.src(0)};
                               asrc.insert(asrc.end(), a.src().begin() + 1, a.src().end());
                               return a.with_src(asrc);
                             }),
                 });
  return pm;
}

}  // namespace tg
