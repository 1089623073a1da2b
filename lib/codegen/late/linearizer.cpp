#include "lib/codegen/late/linearizer.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>

#include "lib/codegen/late/pysort.h"
#include "lib/codegen/late/uop_props.h"
#include "lib/helpers.h"

namespace tg {

namespace {
struct Priority {
  pyint run_count;
  int priority;
  bool has_extra;
  int64_t extra;
};
// python tuple comparison of (run_count, priority, extra): -1/0/1
int cmp_priority(const Priority& a, const Priority& b) {
  if (a.run_count != b.run_count) return a.run_count < b.run_count ? -1 : 1;
  if (a.priority != b.priority) return a.priority < b.priority ? -1 : 1;
  if (a.has_extra != b.has_extra) throw Error("linearize: cannot compare None with an int priority");
  if (a.has_extra && a.extra != b.extra) return a.extra < b.extra ? -1 : 1;
  return 0;
}

// python `<` on two args: numbers compare numerically and a nan is never smaller or larger
bool arg_lt(const Arg& a, const Arg& b) {
  if (a.is_float() && std::isnan(a.as_float())) return false;
  if (b.is_float() && std::isnan(b.as_float())) return false;
  return a.py_cmp(b) < 0;
}
}  // namespace

namespace {
size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

// a hash consistent with python == on args (Arg::py_eq): numbers hash by value (1, 1.0 and True alike), tuples by
// their items; objects with their own == all hash alike (their equality is checked anyway)
size_t py_hash(const Arg& a) {
  switch (a.kind()) {
    case Arg::Kind::Int:
      return std::hash<int64_t>()((int64_t)a.as_int());
    case Arg::Kind::Bool:
      return std::hash<int64_t>()(a.as_bool() ? 1 : 0);
    case Arg::Kind::Float: {
      double f = a.as_float();
      if (f == std::floor(f) && std::fabs(f) < 9.0e18) return std::hash<int64_t>()((int64_t)f);
      return std::hash<double>()(f);
    }
    case Arg::Kind::Invalid:
      return 0x1234;
    case Arg::Kind::Str:
      return std::hash<std::string>()(a.as_str());
    case Arg::Kind::Tuple: {
      size_t h = 0x7475706c65;
      for (const Arg& x : a.items()) h = mix(h, py_hash(x));
      return h;
    }
    case Arg::Kind::Obj:
      return 0x6f626a;
    default:
      return a.hash();
  }
}

}  // namespace

TuplizeOrder::TuplizeOrder(std::span<const UOp> lst) : lst_(lst) {
  BorrowedNodeMap<size_t> pos(lst.size());
  for (size_t i = 0; i < lst.size(); i++) *pos.emplace(lst[i]).first = i;
  build(pos);
}

TuplizeOrder::TuplizeOrder(std::span<const UOp> lst, BorrowedNodeMap<size_t>& pos) : lst_(lst) { build(pos); }

void TuplizeOrder::build(BorrowedNodeMap<size_t>& pos) {
  const size_t n = lst_.size();
  cls_.resize(n), arg_.resize(n), op_.resize(n), dtype_.resize(n), src_begin_.resize(n + 1);
  src_pos_.clear();
  src_pos_.reserve(2 * n);
  // the kernel's few dtypes, ranked by DType's <
  std::vector<DType> dts;
  for (const UOp& u : lst_)
    if (std::find(dts.begin(), dts.end(), u.dtype()) == dts.end()) dts.push_back(u.dtype());
  std::vector<DType> sorted_dts = dts;
  std::sort(sorted_dts.begin(), sorted_dts.end());
  std::vector<uint32_t> dt_rank(dts.size());  // by dts index: its rank in DType's <
  for (size_t k = 0; k < dts.size(); k++)
    dt_rank[k] = (uint32_t)(std::lower_bound(sorted_dts.begin(), sorted_dts.end(), dts[k]) - sorted_dts.begin());
  // each class's (and each arg id's) first node in a flat table of chains: a bucket holds the last such node whose
  // hash falls in it, each node the one before (next_*); a node's hash is compared before its content
  constexpr uint32_t kNone = UINT32_MAX;
  size_t cap = 16;
  while (cap < 2 * n) cap *= 2;
  const size_t mask = cap - 1;
  std::vector<uint32_t> heads(cap, kNone), arg_heads(cap, kNone);
  std::vector<uint32_t> next_in_bucket(n, kNone), next_in_arg_bucket(n, kNone);
  std::vector<size_t> hash_of(n), arg_hash_of(n);
  uint32_t next = 0, next_arg = 0;
  for (size_t i = 0; i < n; i++) {
    const UOp& u = lst_[i];
    src_begin_[i] = (uint32_t)src_pos_.size();
    op_[i] = (uint8_t)u.op();
    dtype_[i] = dt_rank[std::find(dts.begin(), dts.end(), u.dtype()) - dts.begin()];  // a few, found by identity
    const size_t ah = py_hash(u.arg());
    arg_hash_of[i] = ah;
    uint32_t aid = kNone;
    uint32_t& ab = arg_heads[ah & mask];
    for (uint32_t j = ab; j != kNone; j = next_in_arg_bucket[j])
      if (arg_hash_of[j] == ah && lst_[j].arg().py_eq(u.arg())) {
        aid = arg_[j];
        break;
      }
    if (aid == kNone) next_in_arg_bucket[i] = ab, ab = (uint32_t)i, aid = next_arg++;
    arg_[i] = aid;
    size_t h = mix(mix(mix((size_t)u.op(), (size_t)u.dtype().data()), u.nsrc()), ah);
    for (const UOp& x : u.src()) {
      const size_t* p = pos.find(x);
      if (!p) throw Error("TuplizeOrder: a src is not in the list (it must be a toposort)");
      if (*p >= i) throw Error("TuplizeOrder: a src comes after its user (the list must be a toposort)");
      src_pos_.push_back((uint32_t)*p);
      h = mix(h, cls_[*p]);
    }
    hash_of[i] = h;
    uint32_t c = kNone;
    uint32_t& b = heads[(h ^ (h >> 29)) & mask];
    for (uint32_t j = b; j != kNone; j = next_in_bucket[j]) {
      const UOp& v = lst_[j];
      if (hash_of[j] != h || v.op() != u.op() || v.dtype() != u.dtype() || v.nsrc() != u.nsrc() || arg_[j] != arg_[i])
        continue;
      bool same = true;
      for (size_t k = 0; k < u.nsrc() && same; k++)
        same = cls_[src_pos_[src_begin_[j] + k]] == cls_[src_pos_[src_begin_[i] + k]];
      if (same) {
        c = cls_[j];
        break;
      }
    }
    if (c == kNone) next_in_bucket[i] = b, b = (uint32_t)i, c = next++;
    cls_[i] = c;
  }
  src_begin_[n] = (uint32_t)src_pos_.size();
}

bool TuplizeOrder::lt(size_t a, size_t b) const {
  for (;;) {
    if (cls_[a] == cls_[b]) return false;
    if (op_[a] != op_[b]) return op_[a] < op_[b];
    if (arg_[a] != arg_[b]) return arg_lt(lst_[a].arg(), lst_[b].arg());
    if (dtype_[a] != dtype_[b]) return dtype_[a] < dtype_[b];
    const uint32_t *sa = src_pos_.data() + src_begin_[a], *sb = src_pos_.data() + src_begin_[b];
    const uint32_t na = src_begin_[a + 1] - src_begin_[a], nb = src_begin_[b + 1] - src_begin_[b];
    uint32_t i = 0, n = std::min(na, nb);
    while (i < n && cls_[sa[i]] == cls_[sb[i]]) i++;
    if (i == n) return na < nb;
    a = sa[i], b = sb[i];
  }
}

std::vector<UOp> linearize(const UOp& sink) {
  const NodeList lst = sink.toposort_borrowed();  // sink holds the nodes
  const size_t n = lst.size();
  BorrowedNodeMap<size_t> pos(n);  // lst holds the nodes
  for (size_t i = 0; i < n; i++) *pos.emplace(lst[i]).first = i;
  TuplizeOrder tuplize(lst.view(), pos);  // also each node's src positions, read below instead of the map
  std::vector<int64_t> out_degree(n, 0);
  std::vector<Priority> prio(n);
  AddrSpaceCache as;
  // each node's _ranges as a mask over the kernel's RANGEs (srcs come first in the toposort), instead of the list
  // every node would otherwise compute and keep in its cache; kernels with more than 64 ranges take the lists
  std::vector<int8_t> bit(n, -1);
  std::vector<pyint> range_size;  // vmax + 1 of each RANGE, by bit
  std::vector<uint64_t> inner;
  for (size_t i = 0; i < n && range_size.size() <= 64; i++)
    if (lst[i].op() == Ops::RANGE)
      bit[i] = (int8_t)range_size.size(), range_size.push_back(sat_add(lst[i].vmax().as_int(), 1));
  if (range_size.size() <= 64) {
    inner.resize(n);
    auto own = [&](size_t j) { return bit[j] >= 0 ? uint64_t(1) << bit[j] : uint64_t(0); };
    for (size_t i = 0; i < n; i++) {
      uint64_t m = 0;
      for (uint32_t j : tuplize.srcs(i)) m |= own(j) | inner[j];  // s.ranges: s itself when a RANGE, and its _ranges
      lst[i].for_each_ended_range([&](U er) {
        size_t j = *pos.find(er);
        m &= ~(bit[j] >= 0 ? own(j) : inner[j]);  // er.ranges of a non-RANGE is its _ranges
      });
      inner[i] = m;
    }
  }
  for (size_t k = n; k > 0; k--) {
    const UOp& u = lst[k - 1];
    for (uint32_t j : tuplize.srcs(k - 1)) out_degree[j]++;
    // we place UOps with higher run_counts later
    pyint run_count = u.op() == Ops::RANGE ? sat_add(u.vmax().as_int(), 1) : 1;  // u.ranges: u itself, then _ranges
    if (!inner.empty()) {
      uint64_t m = inner[k - 1] & ~(bit[k - 1] >= 0 ? uint64_t(1) << bit[k - 1] : uint64_t(0));
      for (; m; m &= m - 1) {
        const pyint r = range_size[__builtin_ctzll(m)];
        // below 2**62 both, the product fits a pyint: no saturation to check
        run_count = run_count >= 0 && r >= 0 && run_count < (pyint(1) << 62) && r < (pyint(1) << 62)
                        ? run_count * r
                        : sat_mul(run_count, r);
      }
    } else {
      for (const UOp& r : u.inner_ranges())
        if (r != u) run_count = sat_mul(run_count, sat_add(r.vmax().as_int(), 1));
    }
    Priority p{run_count, 0, false, 0};
    switch (u.op()) {
      case Ops::PARAM:
        p.priority = -20, p.has_extra = true, p.extra = u.param_arg()->slot;
        break;
      case Ops::BUFFER:
        p.priority = as.get(u) == AddrSpace::LOCAL ? -17 : -18;
        break;
      case Ops::LOAD:
        p.priority = -1;
        break;  // place loads early
      case Ops::STORE:
        p.priority = 1;
        break;  // place stores late
      case Ops::RANGE:
        p.priority = 5;
        break;  // placing RANGE is good
      case Ops::END:
        p.priority = -5;
        break;  // placing END is bad
      default:
        break;
    }
    prio[k - 1] = p;
  }
  // number the uops in "ideal" order: python's sorted() on priorities[x]+x.tuplize (TUPLE_ORDER=1); python's own
  // algorithm, since `<` on a tuplize holding a nan const is false both ways
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; i++) order[i] = i;
  detail::py_sort_indices(order, [&](size_t a, size_t b) {
    int c = cmp_priority(prio[a], prio[b]);
    if (c != 0) return c < 0;
    return tuplize.lt(a, b);
  });
  std::vector<size_t> nkey(n);
  for (size_t i = 0; i < n; i++) nkey[order[i]] = i;
  // then force them to be toposorted in as close to the ideal order as possible: pop the largest key first, reverse
  // a max-heap of nkeys (each node's own: the node at nkey k is order[k])
  std::vector<uint32_t> heap{(uint32_t)nkey[n - 1]};  // the sink: the toposort's last node
  heap.reserve(n);
  std::vector<UOp> newlst;
  newlst.reserve(n);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    size_t i = order[heap.back()];
    heap.pop_back();
    newlst.push_back(lst[i]);
    for (uint32_t j : tuplize.srcs(i))
      if (--out_degree[j] == 0) heap.push_back((uint32_t)nkey[j]), std::push_heap(heap.begin(), heap.end());
  }
  std::reverse(newlst.begin(), newlst.end());
  return newlst;
}

CFGContext::CFGContext(const UOp& sink) {
  // there are 3 relationships between ranges:
  // nested: endrange y is a dependency of endrange x and range x is a dependency of endrange y
  // dependent: endrange y is a dependency of endrange x and range x is not a dependency of endrange y
  // independent: endrange y is not a dependency of endrange x
  // everything is nested inside the sink
  // deps: the RANGEs and ENDs below each node, insertion-ordered (the reference's dict). A kernel has a few of them,
  // so each node's list is a short run of one flat pool, searched linearly; nodes are borrowed (topo holds them)
  const NodeList topo = sink.toposort_borrowed();  // sink holds the nodes
  BorrowedNodeMap<uint32_t> index(topo.size());
  using Deps = std::span<detail::UOpNode* const>;
  std::vector<detail::UOpNode*> pool;
  std::vector<std::pair<uint32_t, uint32_t>> runs;  // each node's (start, length) in pool
  runs.reserve(topo.size());
  auto deps_of = [&](U u) -> Deps {
    auto [at, len] = runs[*index.find(u)];
    return Deps(pool.data() + at, len);
  };
  auto has = [](Deps d, detail::UOpNode* x) { return std::find(d.begin(), d.end(), x) != d.end(); };
  // with at most 64 RANGEs and ENDs, each node's deps also as a mask of them (bits in toposort order): the lists
  // dedup by mask, and a node whose srcs add nothing to its first src's deps shares that src's run of the pool
  size_t n_re = 0;
  for (const UOp& u : topo) n_re += u.op() == Ops::RANGE || u.op() == Ops::END;
  const bool masked = n_re <= 64;
  std::vector<uint64_t> masks;  // by index
  std::vector<int8_t> bit;      // by index: the node's bit, -1 if not a RANGE or an END
  if (masked) masks.reserve(topo.size()), bit.reserve(topo.size());
  int next_bit = 0;
  auto in_deps = [&](U x, U y) {  // y is among x's deps
    if (!masked) return has(deps_of(x), y.node());
    const uint32_t* yi = index.find(y);
    if (!yi || bit[*yi] < 0) return false;
    return ((masks[*index.find(x)] >> bit[*yi]) & 1) != 0;
  };
  std::vector<std::pair<UOp, UOp>> nesting;  // END -> its parent (END or SINK), insertion-ordered
  RawNodeSet nested;
  std::vector<detail::UOpNode*> d;
  for (const UOp& u : topo) {
    const bool re = u.op() == Ops::RANGE || u.op() == Ops::END;
    uint64_t m = 0;
    Deps shared;  // d when it is one src's run
    bool is_shared = false;
    if (masked) {
      int first = -1;
      for (size_t i = 0; i < u.nsrc(); i++) {
        uint64_t sm = masks[*index.find(u.src(i))];
        if (first < 0 && sm) first = (int)i;
        m |= sm;
      }
      if (first < 0) {
        is_shared = true;  // no deps
      } else if (masks[*index.find(u.src(first))] == m) {
        shared = deps_of(u.src(first)), is_shared = true;
      }
    }
    if (!is_shared) {
      d.clear();
      uint64_t seen = 0;
      for (const UOp& s : u.src())
        for (detail::UOpNode* x : deps_of(s)) {
          if (masked) {
            const uint64_t b = uint64_t(1) << bit[*index.find(*reinterpret_cast<const UOp*>(&x))];
            if (seen & b) continue;
            seen |= b;
          } else if (has(d, x)) {
            continue;
          }
          d.push_back(x);
        }
    }
    const Deps cur = is_shared ? shared : Deps(d.data(), d.size());
    if (u.op() == Ops::END || u.op() == Ops::SINK) {
      for (detail::UOpNode* xn : cur) {
        const UOp& x = *reinterpret_cast<const UOp*>(&xn);  // a view: no reference taken
        if (x.op() != Ops::END || nested.contains(xn)) continue;
        if (u.op() == Ops::SINK || in_deps(x, u.src(1))) {
          nesting.emplace_back(x, u);
          nested.insert(xn);
        }
      }
    }
    const auto idx = (uint32_t)runs.size();
    *index.emplace(u).first = idx;
    if (masked) {
      bit.push_back(re ? (int8_t)next_bit : (int8_t)-1);
      masks.push_back(re ? m | (uint64_t(1) << next_bit++) : m);
    }
    if (is_shared && !re) {
      runs.push_back({(uint32_t)(cur.data() ? cur.data() - pool.data() : 0), (uint32_t)cur.size()});
      continue;
    }
    if (is_shared) d.assign(cur.begin(), cur.end());  // cur points into the pool, which the insert may move
    if (re) d.push_back(u.node());
    runs.push_back({(uint32_t)pool.size(), (uint32_t)d.size()});
    pool.insert(pool.end(), d.begin(), d.end());
  }
  std::vector<std::pair<UOp, std::vector<UOp>>> siblings;
  UOpMap<size_t> sib_index;
  for (const auto& [k, vv] : nesting) {
    auto it = sib_index.find(vv);
    if (it == sib_index.end()) {
      sib_index.emplace(vv, siblings.size());
      siblings.push_back({vv, {k}});
    } else {
      siblings[it->second].second.push_back(k);
    }
  }
  for (auto& [k, v] : siblings) {
    // ranges that have dependencies on other siblings need to be scheduled after them
    std::vector<std::pair<size_t, UOp>> keyed;
    for (const UOp& x : v) {
      size_t cnt = 0;
      for (const UOp& y : v) cnt += has(deps_of(x), y.node());
      keyed.push_back({cnt, x});
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<UOp> order;
    for (auto& [c, x] : keyed) order.push_back(x);
    std::vector<std::pair<UOp, UOp>> zipped;
    if (k.op() == Ops::SINK) {
      for (size_t i = 0; i + 1 < order.size(); i++) zipped.push_back({order[i], order[i + 1]});
    } else {
      std::vector<UOp> first{k.src(1)};
      first.insert(first.end(), order.begin(), order.end());
      for (size_t i = 0; i < order.size(); i++) zipped.push_back({first[i], order[i]});
    }
    for (const auto& [x, y] : zipped) {
      // TODO in the reference: this can happen, it causes an infinite loop in shufflenet
      if (x.in_backward_slice_with_self(y.src(1))) throw Error("CFGContext: a range depends on its sibling's END");
      edges[y.src(1)] = x;
    }
  }
}

const PatternMatcher& pm_add_control_flow() {
  static const PatternMatcher pm("pm_add_control_flow", {
                                                            TG_RULE(UPat(Ops::RANGE).named("x"),
                                                                    [](CFGContext* ctx, U x) -> UOp {
                                                                      auto it = ctx->edges.find(x);
                                                                      if (it == ctx->edges.end()) return UOp();
                                                                      std::vector<UOp> src(x.src().begin(),
                                                                                           x.src().end());
                                                                      src.push_back(it->second);
                                                                      return x.with_src(src);
                                                                    }),
                                                        });
  return pm;
}

ContextVar LOOP_ORDER("LOOP_ORDER", 1, 0, 1);

namespace {
// how far each of `loops` moves the index expression u per step, as a linear coefficient (divisions and moduli by
// constants scale it, anything else that is not linear adds the magnitudes of its sources; loads in an index are
// data, not position). An estimate for ordering loops, never for correctness.
using Coeffs = std::vector<double>;
const Coeffs& index_coeffs(const UOp& u, const std::vector<UOp>& loops, UOpMap<Coeffs>& memo) {
  if (auto it = memo.find(u); it != memo.end()) return it->second;
  Coeffs c(loops.size(), 0.0);
  auto cval = [](U x) { return x.op() == Ops::CONST ? std::optional<double>(x.val().as_float()) : std::nullopt; };
  if (auto f = std::find(loops.begin(), loops.end(), u); f != loops.end()) {
    c[f - loops.begin()] = 1.0;
  } else if (u.op() != Ops::LOAD && u.op() != Ops::CONST && u.op() != Ops::PARAM) {
    std::optional<double> k = u.nsrc() == 2 ? cval(u.src(1)) : std::nullopt;
    if (k && u.op() == Ops::MUL) {
      const Coeffs& a = index_coeffs(u.src(0), loops, memo);
      for (size_t i = 0; i < c.size(); i++) c[i] = a[i] * *k;
    } else if (k && (u.op() == Ops::SHL || u.op() == Ops::SHR || u.op() == Ops::CDIV || u.op() == Ops::CMOD)) {
      const Coeffs& a = index_coeffs(u.src(0), loops, memo);
      double s = u.op() == Ops::SHL ? std::ldexp(1.0, (int)*k) : u.op() == Ops::SHR ? std::ldexp(1.0, -(int)*k) : *k;
      for (size_t i = 0; i < c.size(); i++)
        c[i] = u.op() == Ops::SHL ? a[i] * s : u.op() == Ops::CMOD ? std::min(std::fabs(a[i]), s) : a[i] / s;
    } else if (u.op() == Ops::ADD) {
      const Coeffs &a = index_coeffs(u.src(0), loops, memo), &b = index_coeffs(u.src(1), loops, memo);
      for (size_t i = 0; i < c.size(); i++) c[i] = a[i] + b[i];
    } else {
      for (const UOp& s : u.src()) {
        const Coeffs& a = index_coeffs(s, loops, memo);
        for (size_t i = 0; i < c.size(); i++) c[i] += std::fabs(a[i]);
      }
    }
  }
  return memo.emplace(u, std::move(c)).first->second;
}

// LOOP_ORDER=1 (CPU loops over the output): the loop whose step moves the kernel's memory accesses the most runs
// outermost, the one that moves them least innermost, so consecutive iterations reuse what the cache holds (a
// weight gradient whose batch-chunk loop came last in the output's order streamed megabytes per iteration). Each
// access counts as often as it runs per output iteration. Only the nesting of output loops changes: every output is
// computed by the same ops in the same order, so results are bit-identical. Ties keep the reference's order.
constexpr double kCacheBytes = 1 << 20;  // a core's L2 on the machines we measure (Zen 4: 1 MiB)
void order_output_loops(const UOp& body, std::vector<UOp>& rngs) {
  std::vector<size_t> pos;
  std::vector<UOp> loops;
  for (size_t i = 0; i < rngs.size(); i++)
    if (rngs[i].op() == Ops::RANGE) {
      AxisType t = rngs[i].arg().items().back().as_axis();
      if (t == AxisType::LOOP || t == AxisType::WEAK || t == AxisType::GLOBAL)
        pos.push_back(i), loops.push_back(rngs[i]);
    }
  if (loops.size() < 2) return;
  // a loop whose bound depends on another loop of the nest (a triangular nest) must stay inside it
  for (const UOp& l : loops)
    for (const UOp& o : loops)
      if (l != o && l.src(0).in_backward_slice_with_self(o)) return;
  UOpMap<Coeffs> memo;
  std::vector<double> move(loops.size(), 0.0);
  for (const UOp& u : body.toposort()) {
    // scalar accesses INDEX(PARAM, idx[, gate]), vector ones SHRINK(PARAM, start, len)
    if ((u.op() != Ops::INDEX && u.op() != Ops::SHRINK) || u.nsrc() < 2 || u.src(0).op() != Ops::PARAM) continue;
    double runs = 1.0;
    for (const UOp& r : u.ranges())
      if (std::find(loops.begin(), loops.end(), r) == loops.end()) runs *= (double)r.vmax().as_int() + 1.0;
    // a buffer that fits in the L2 cache stays there whatever the order: its accesses count in proportion
    const UOp& buf = u.src(0);
    double itemsize = std::max(1, buf.dtype().itemsize()), bytes = kCacheBytes;
    if (buf.nsrc() > 0 && buf.src(0).op() == Ops::CONST) bytes = (double)buf.src(0).val().as_int() * itemsize;
    double w = itemsize * runs * std::min(1.0, bytes / kCacheBytes);
    const Coeffs& c = index_coeffs(u.src(1), loops, memo);
    for (size_t i = 0; i < loops.size(); i++) move[i] += std::fabs(c[i]) * w;
  }
  // rngs is innermost first: ascending movement, stable so equal movement keeps the reference's order
  std::vector<size_t> order(loops.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return move[a] < move[b]; });
  for (size_t i = 0; i < pos.size(); i++) rngs[pos[i]] = loops[order[i]];
}
}  // namespace

UOp do_split_ends(const UOp& e) {
  UOp ret = e.src(0);
  std::vector<UOp> backedge, rest;
  for (size_t i = 1; i < e.nsrc(); i++) {
    const UOp& x = e.src(i);
    if (x.dtype() == dtypes::void_ || x.dtype() == dtypes::bool_) backedge.push_back(x);
  }
  for (size_t i = 1; i < e.nsrc(); i++)
    if (std::find(backedge.begin(), backedge.end(), e.src(i)) == backedge.end()) rest.push_back(e.src(i));
  std::vector<UOp> rngs = UOp::sink(rest).ranges();
  // sorted by arg, reverse (python tuple order of the RANGE args); stable like sorted(reverse=True)
  std::stable_sort(rngs.begin(), rngs.end(), [](U a, U b) { return b.arg().py_cmp(a.arg()) < 0; });
  if (LOOP_ORDER.value()) order_output_loops(e.src(0), rngs);
  for (const UOp& r : rngs) ret = ret.end(std::span<const UOp>(&r, 1));
  return backedge.empty() ? ret : ret.end(backedge);
}

const PatternMatcher& pm_split_ends() {
  static const PatternMatcher pm("pm_split_ends",
                                 {
                                     // split the ends
                                     TG_RULE(UPat(Ops::END).named("e"), [](U e) { return do_split_ends(e); }),
                                 });
  return pm;
}

}  // namespace tg
