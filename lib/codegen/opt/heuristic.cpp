#include "lib/codegen/opt/heuristic.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "lib/codegen/helpers.h"

namespace tg {

static pyint iv(const sint& s) {
  if (!s.is_int()) throw Error("symbolic shape in hand_coded_optimizations: " + s.str());
  return s.i();
}
// python's `x in u.backward_slice` (the slice excludes u itself)
static bool in_bs(const UOp& u, const UOp& x) { return u != x && u.in_backward_slice_with_self(x); }

// python's resolve(prod(...) <op> x, default) over int|UOp shapes
static sint sprod(const std::vector<sint>& v) {
  sint p = 1;
  for (const sint& s : v) {
    if (p.is_int() && s.is_int())
      p = sint(p.i() * s.i());
    else
      p = sint(p.to_uop() * s.to_uop());
  }
  return p;
}

// ***** CPU register tiles (CPU_TILE=1, not in the reference) *****
ContextVar CPU_TILE("CPU_TILE", 1, 0, 1);

namespace {
// how far one step of `r` moves the linear index `idx`: 0 when idx does not depend on r, nullopt when it is not
// linear in r (a division, a modulo, a product of two ranges)
std::optional<pyint> index_stride(const UOp& idx, const UOp& r) {
  if (idx == r) return 1;
  if (!in_bs(idx, r)) return 0;
  if (idx.op() == Ops::ADD) {
    auto a = index_stride(idx.src(0), r), b = index_stride(idx.src(1), r);
    if (!a || !b) return std::nullopt;
    return *a + *b;
  }
  if (idx.op() == Ops::MUL)
    for (int i : {0, 1})
      if (idx.src(1 - i).op() == Ops::CONST && idx.src(1 - i).val().is_int()) {
        auto a = index_stride(idx.src(i), r);
        if (!a) return std::nullopt;
        return *a * idx.src(1 - i).val().as_int();
      }
  return std::nullopt;
}

// whether the host has AVX-512 (CPUID)
bool host_has_avx512() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool b = __builtin_cpu_supports("avx512f");
  return b;
#else
  return false;
#endif
}

// the host's vector registers: 32 with AVX-512 (zmm0-31, and ymm16-31 through AVX-512VL), 16 with AVX/AVX2
int host_vector_registers() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const int n = __builtin_cpu_supports("avx512vl") ? 32 : 16;
  return n;
#else
  return 16;
#endif
}
}  // namespace

// the most FMAs a tile puts in the unrolled body of its reduce loop (the reference's largest: 320)
constexpr pyint kMaxTileBody = 1024;

// the buffer accesses (INDEX) of k that depend on one of its reduce ranges: the loads a tile multiplies
static std::vector<UOp> reduce_loads(const Scheduler& k) {
  auto reduce = k.ranges_of({AxisType::REDUCE, AxisType::UNROLL});
  std::vector<UOp> out;
  for (const UOp& b : k.bufs()) {
    UOp idx = b.src(1).get_idx();
    for (const UOp& r : reduce)
      if (in_bs(idx, r)) {
        out.push_back(b);
        break;
      }
  }
  return out;
}

// whether one of the reference's upcast axes steps an input of the reduce by one element: its tile then loads
// contiguous vectors, and only a tile that does too replaces it
static bool ref_lanes_contiguous(const Scheduler& ref) {
  for (const UOp& b : reduce_loads(ref)) {
    UOp idx = b.src(1).get_idx();
    for (const UOp& u : ref.ranges_of({AxisType::UPCAST}))
      if (auto s = index_stride(idx, u); s && *s == 1) return true;
  }
  return false;
}

// An outer-product tile: 8 x 8 outputs along two output axes a and b such that every input of the reduce depends on
// at most one of them (a weight gradient: the output gradient on the output channel, the activation on the input
// channel). Each reduce step gathers 8 values of each side and makes 64 products, which LLVM's SLP vectorizer, when
// it may build vectors wider than 8 lanes (hosts without AVX-512), packs into vector FMAs. Returns false, changing
// nothing, when no such pair of axes exists or the unrolled body would exceed kMaxTileBody FMAs.
static bool cpu_outer_product_tile(Scheduler& k, pyint unrolled) {
  const pyint side = 8;
  if (side * side * unrolled > kMaxTileBody) return false;
  auto fs = k.full_shape();
  auto rs = k.rngs();
  std::vector<UOp> loads;
  for (const UOp& b : reduce_loads(k)) loads.push_back(b.src(1).get_idx());
  auto dims = k.upcastable_dims();
  for (int64_t a : dims)
    for (int64_t b : dims) {
      if (b <= a || !fs[(size_t)a].is_int() || !fs[(size_t)b].is_int() || fs[(size_t)a].i() % side != 0 ||
          fs[(size_t)b].i() % side != 0)
        continue;
      bool on_a = false, on_b = false, separable = true;
      for (const UOp& idx : loads) {
        bool da = in_bs(idx, rs[(size_t)a]) || idx == rs[(size_t)a],
             db = in_bs(idx, rs[(size_t)b]) || idx == rs[(size_t)b];
        separable &= !(da && db);
        on_a |= da, on_b |= db;
      }
      if (!separable || !on_a || !on_b) continue;
      Scheduler t = k.copy();
      try {
        // the higher axis first, so the lower one keeps its number
        t.apply_opt(Opt(OptOps::UPCAST, b, Arg((long long)side)));
        t.apply_opt(Opt(OptOps::UPCAST, a, Arg((long long)side)));
      } catch (const KernelOptError&) {
        continue;
      }
      k = std::move(t);
      return true;
    }
  return false;
}

// A reduce kernel on the CPU computes a tile of V x R outputs per step of its reduce loops: V lanes along one output
// axis and R rows along another, R accumulators in registers (4 to 16, at most the host's vector registers: 16 rows of
// 8 lanes fill AVX2's 16 ymm registers and spill, and still ran faster than 8 rows on the conv gradients). V is 8 (a
// ymm vector after LLVM's SLP vectorizer, CPU_SLP_MAX_VF wide) or 4 (an xmm vector, for axes that 8 does not divide,
// like a 20-wide image row). Each reduce step loads, for every input, one vector (stride 1 along the lanes), one
// broadcast (stride 0) or a gather (anything else), once if the rows share it (stride 0 along the rows) or once per
// row. The tile with the fewest loads per vector FMA wins, under limits measured on beautiful_mnist's convolutions
// (slower tiles otherwise): 4 lanes only load contiguously; at most one input gathers 8 lanes, and none when the
// reference's own tile loads contiguously (allow_gather false); what each row loads on its own comes from a buffer the
// L2 holds (the weights), not an activation streamed per row, unless the rows are neighbors (the row axis steps that
// load by one element, so the rows share its cache lines) in a tile whose unrolled body is at most kMaxNeighborBody
// FMAs; the unrolled reduce body stays at most kMaxTileBody FMAs. Each output is still summed by the same ops in the
// same order, so values do not change. Returns false, changing nothing, when no tile of at least kMinRows rows fits.
static bool cpu_register_tile(Scheduler& k, pyint unrolled, bool allow_gather) {
  const int lanes = 8;  // CPU_SLP_MAX_VF's default: one ymm register
  const double kRowBytes = 256 * 1024;
  const pyint kMinRows = 4;  // accumulators that hide the FMA's latency; one row is a vector, not a tile
  // Neighbor rows: a convolution's forward whose weights are read with the output channels innermost
  // (CPU_CONV_LAYOUT) gets 8 output-channel lanes, one weight vector per tap, and rows along an image row, each
  // broadcasting its own activation. beautiful_mnist's second convolution (5 unrolled taps) runs in 102-112 ms with 5
  // rows (200 FMAs) instead of the 4-lane tile's 160 ms (AMD EPYC Zen 2). Bigger bodies the SLP vectorizer packs along
  // the rows or leaves scalar: 10 rows there (400 FMAs) 336-690 ms, and the fourth convolution (9 unrolled taps, 6
  // rows, 432 FMAs) 70 ms instead of the outer product's 28.
  const pyint kMaxNeighborBody = 256;
  const pyint max_rows = host_vector_registers();
  auto fs = k.full_shape();
  auto rs = k.rngs();
  std::vector<UOp> loads;
  std::vector<double> load_bytes;  // the size of each load's buffer (unknown: larger than any cache)
  for (const UOp& b : reduce_loads(k)) {
    loads.push_back(b.src(1).get_idx());
    const UOp& buf = b.src(0);
    load_bytes.push_back(buf.op() == Ops::PARAM && buf.nsrc() > 0 && buf.src(0).op() == Ops::CONST
                             ? (double)buf.src(0).val().as_int() * std::max(1, buf.dtype().itemsize())
                             : 1e18);
  }
  if (loads.empty()) return false;
  auto dims = k.upcastable_dims();
  struct Best {
    double cost = 1e30;
    int64_t vec = -1, row = -1;
    pyint v = 0, r = 0;
  } best;
  for (int64_t a : dims) {
    if (!fs[(size_t)a].is_int()) continue;
    pyint na = fs[(size_t)a].i();
    for (pyint v : {(pyint)lanes, (pyint)lanes / 2}) {
      if (na % v != 0) continue;
      // per input: the loads that make one V-lane vector of it; a gather (a stride other than 0 or 1) is built from
      // scalar loads and inserts
      std::vector<double> lane_cost;
      int gathers = 0;
      for (const UOp& idx : loads) {
        auto s = index_stride(idx, rs[(size_t)a]);
        bool g = !s || (*s != 0 && *s != 1);
        gathers += g;
        lane_cost.push_back(s && *s == 0 ? 1.0 : g ? 2.0 * (double)v : (double)v / 4);
      }
      // 4 lanes (an xmm vector) only where they load contiguously, 8 with at most one gathered input
      if (gathers > (allow_gather && v == lanes ? 1 : 0)) continue;
      for (int64_t b : dims) {
        if (b == a || !fs[(size_t)b].is_int()) continue;
        pyint nb = fs[(size_t)b].i();
        for (pyint r =
                 std::min<pyint>({nb, max_rows * lanes / v, 16, std::max<pyint>(1, kMaxTileBody / (v * unrolled))});
             r >= 1; r--) {  // apply_opt: upcasts of <= 16
          if (nb % r != 0) continue;
          double ld = 0;
          bool rows_cached = true;
          for (size_t i = 0; i < loads.size(); i++) {
            auto s = index_stride(loads[i], rs[(size_t)b]);
            ld += lane_cost[i] * (s && *s == 0 ? 1.0 : (double)r);
            // what each row loads on its own must come from a buffer the core's L2 holds (the weights): rows that
            // stream an activation each wait on memory, slower than the reference's tile; neighbor rows share its
            // lines
            bool neighbors = s && *s == 1 && r * v * unrolled <= kMaxNeighborBody;
            if (r > 1 && !(s && *s == 0) && !neighbors && load_bytes[i] > kRowBytes) rows_cached = false;
          }
          if (!rows_cached) continue;
          double cost = ld / ((double)r * (double)v / lanes);
          if (cost < best.cost - 1e-9 || (cost < best.cost + 1e-9 && r * v > best.r * best.v))
            best = {cost, a, b, v, r};
        }
      }
    }
  }
  if (best.vec < 0 || best.r < kMinRows) return false;
  Scheduler t = k.copy();
  try {
    t.apply_opt(Opt(OptOps::UPCAST, best.vec, Arg((long long)best.v)));
    // an upcast of a whole axis removes it: the row axis after it moves down by one
    int64_t row = best.row - (best.row > best.vec && best.v == fs[(size_t)best.vec].i() ? 1 : 0);
    if (best.r > 1) t.apply_opt(Opt(OptOps::UPCAST, row, Arg((long long)best.r)));
  } catch (const KernelOptError&) {
    return false;
  }
  k = std::move(t);
  return true;
}

// One of the reference's unrolls: the reduce range it unrolls (by its axis id, which our tile's upcasts of output
// axes leave alone), the opt, how many iterations it unrolls, and whether our tile keeps it.
struct RefUnroll {
  int64_t axis_id;
  Opt opt;
  pyint amount;
  bool keep;
};

// The reference's unrolls in order. Ours drops one that unrolls the range of an outer reduce whose summand is an inner
// reduce (a transposed convolution: sum over the taps of where(valid, sum over channels, 0)). Unrolled, every
// accumulator of the inner sum exists once per unrolled tap (our 8 x 16 tile times 6 taps: 768 floats on the stack);
// as a loop, the inner sums are added one after another in the same order (the unrolled form adds them left to right
// to the accumulator too), so every value stays the same, and the tap's gate becomes uniform over the tile, which
// lets skip_gated_reduce_loops skip the invalid taps.
static std::vector<RefUnroll> ref_unrolls(const Scheduler& k0, const Scheduler& ref) {
  std::vector<RefUnroll> out;
  Scheduler t = k0.copy();
  for (const Opt& o : ref.applied_opts) {
    if (o.op == OptOps::UNROLL) {
      int64_t axis = t.real_axis(OptOps::UNROLL, o.axis);
      UOp r = t.rngs()[(size_t)axis];
      bool outer = false;
      for (const UOp& u : t.ast.toposort()) {
        if (u.op() != Ops::REDUCE || outer) continue;
        bool reduces_r = false;
        for (size_t i = 1; i < u.nsrc(); i++) reduces_r |= u.src(i) == r;
        if (reduces_r)
          for (const UOp& v : u.src(0).toposort()) outer |= v.op() == Ops::REDUCE;
      }
      pyint amount = o.arg.is_int() && o.arg.as_int() != 0 ? o.arg.as_int() : iv(t.full_shape()[(size_t)axis]);
      out.push_back({(int64_t)r.arg()[0].as_int(), o, amount, !outer});
    }
    t.apply_opt(o);
  }
  return out;
}

// applies a kept unroll to t, whose reduce axes may be numbered apart from the reference's (an unroll it dropped)
static void apply_ref_unroll(Scheduler& t, const RefUnroll& u) {
  auto ud = t.unrollable_dims();
  auto rs = t.rngs();
  for (size_t i = 0; i < ud.size(); i++)
    if (rs[(size_t)ud[i]].arg()[0].as_int() == u.axis_id) {
      t.apply_opt(Opt(OptOps::UNROLL, (int64_t)i, u.opt.arg));
      return;
    }
  throw KernelOptError("the reference's unrolled axis is gone");
}

static Scheduler hand_coded(const Scheduler& k0, bool cpu_tile) {
  // first try the tensor cores
  // NOTE: unless TC_OPT is > 0, we only trigger tensor cores if there's only one reduce axis
  // No ported renderer has tensor cores, so apply_opt(TC) raises KernelOptError on every axis (its last check): the
  // attempts change nothing, and each would cost a C++ throw (30 of an MLP codegen's 42)
  constexpr bool kTensorCores = false;
  if (kTensorCores && USE_TC.value() > 0 &&
      (k0.axes_of({AxisType::GROUP_REDUCE, AxisType::REDUCE}).size() == 1 || TC_OPT.value() >= 1)) {
    for (int axis = 0; axis < 3; axis++) {
      Scheduler tk = k0.copy();
      try {
        tk.apply_opt(Opt(OptOps::TC, axis,
                         Arg::tup(Arg((long long)TC_SELECT.value()), Arg((long long)TC_OPT.value()),
                                  Arg((long long)USE_TC.value()))));
      } catch (const KernelOptError&) {
        continue;
      }
      throw Error("tensor cores are not ported");
    }
  }

  // make a copy so it does not mutate the input
  Scheduler k = k0.copy();

  // (IMAGE upcasts are not ported: IMAGE=0)
  if (IMAGE.value()) throw Error("IMAGE is not ported");

  // should use matvec - TODO: adjust/tune based on the wide vs tall/large vs small mat
  int64_t MV_BLOCKSIZE = getenv_int("MV_BLOCKSIZE", 4), MV_THREADS_PER_ROW = getenv_int("MV_THREADS_PER_ROW", 8),
          MV_ROWS_PER_THREAD = getenv_int("MV_ROWS_PER_THREAD", 4);
  UOp red = k.reduceop();
  if (k.ren->has_local && getenv_int("MV", 1) != 0 &&
      (MV_BLOCKSIZE > 1 || MV_THREADS_PER_ROW > 1 || MV_ROWS_PER_THREAD > 1) && red &&
      red.arg()[0].as_op() == Ops::ADD && k.full_shape().size() >= 2 && k.ren->has_shared &&
      red.src(0).op() == Ops::MUL && red.src(0).src(0).op() == Ops::INDEX && red.src(0).src(1).op() == Ops::INDEX) {
    UOp mulop = red.src(0);
    UOp idx0 = mulop.src(0).src(1).get_idx(), idx1 = mulop.src(1).src(1).get_idx();
    auto reduce_rngs = k.ranges_of({AxisType::REDUCE});
    if (!reduce_rngs.empty()) {
      UOp first_reduce_rng = reduce_rngs[0];
      auto terms = idx0.split_uop(Ops::ADD);
      bool in_terms = contains(terms, first_reduce_rng);
      bool all_in = true;
      auto r1 = idx1.ranges();
      for (const UOp& r : idx0.ranges())
        if (!contains(r1, r)) all_in = false;
      if (in_terms && all_in) {
        for (int64_t global_idx : k.axes_of({AxisType::GLOBAL})) {
          if (first_reduce_rng.src(0).divides(MV_THREADS_PER_ROW) &&
              iv(k.full_shape()[(size_t)global_idx]) % (MV_BLOCKSIZE * MV_ROWS_PER_THREAD) == 0) {
            try {
              if (MV_THREADS_PER_ROW > 1) k.apply_opt(Opt(OptOps::GROUP, 0, Arg((long long)MV_THREADS_PER_ROW)));
            } catch (const KernelOptError&) {
            }
            if (MV_BLOCKSIZE > 1) k.apply_opt(Opt(OptOps::LOCAL, global_idx, Arg((long long)MV_BLOCKSIZE)));
            if (MV_ROWS_PER_THREAD > 1)
              k.apply_opt(Opt(OptOps::UPCAST, global_idx, Arg((long long)MV_ROWS_PER_THREAD)));
            return k;
          }
        }
      }
    }
  }

  // are we grouping? (requires local shape support)
  {
    auto os = k.output_shape();
    std::vector<sint> v;
    for (int64_t i : k.upcastable_dims()) v.push_back(os[(size_t)i]);
    sint p = sprod(v);
    pyint lim = NOLOCALS.value() ? 240 : 2048;
    bool grouping = p.is_int() ? p.i() <= lim : resolve(p.u().le(PyConst(lim)), false);
    // without locals apply_opt(GROUPTOP) raises KernelOptError at its first check on every axis: the attempts change
    // nothing, and each would cost a C++ throw
    if (grouping && k.ren->has_local) {
      for (int axis : {0, 1, 2}) {
        try {
          k.apply_opt(Opt(OptOps::GROUPTOP, axis, Arg(16)));
          break;
        } catch (const KernelOptError&) {
        }
      }
    }
  }

  // no more opt if we are grouping
  if (k.group_for_reduces()) return k;

  // **** below this line need to be optional and benchmarked ****

  // if there are small dims with lots of valid masks, upcast them (they might be from Tensor.stack)
  std::vector<int64_t> to_upcast;
  std::vector<UOp> where_gate_rngs;
  for (const UOp& u : k.ast.backward_slice())
    if (u.op() == Ops::WHERE)
      for (const UOp& r : u.src(0).ranges())
        if (!contains(where_gate_rngs, r)) where_gate_rngs.push_back(r);
  // upcast leading axes first (hack-ish for winograd; we actually want to upcast masked axes with low stride first)
  {
    auto fs = k.full_shape();
    auto rs = k.rngs();
    for (int64_t axis : k.upcastable_dims()) {
      bool is_masked = contains(where_gate_rngs, rs[(size_t)axis]);
      pyint p = 1;
      for (int64_t j : to_upcast) p *= iv(fs[(size_t)j]);
      if (iv(fs[(size_t)axis]) <= 7 && is_masked && p * iv(fs[(size_t)axis]) <= 7 * 7) to_upcast.push_back(axis);
    }
  }
  for (auto it = to_upcast.rbegin(); it != to_upcast.rend(); ++it) k.apply_opt(Opt(OptOps::UPCAST, *it, Arg(0)));

  // on the CPU, a reduce kernel gets a register tile sized for the host's vectors (CPU_TILE=1), keeping the reference's
  // unrolls of the reduce axes and its threads: an unroll changes how the products are added, so keeping them keeps the
  // reference's sums. Only for DEV=CPU (the CLANG renderer), whose IR spells every contraction (llvm.fmuladd) as clang
  // does: with DEV=CPU:LLVM, LLVM's instruction selection decides which multiply and add fuse, and another tile changes
  // that, so the values would leave the reference's
  if (cpu_tile && cpu_tiles_apply(*k.ren) && to_upcast.empty() && !k.ranges_of({AxisType::REDUCE}).empty()) {
    Scheduler ref = hand_coded(k0, false);
    std::optional<std::vector<RefUnroll>> replayed;
    try {
      replayed = ref_unrolls(k, ref);
    } catch (const KernelOptError&) {  // (the reference's opts always apply again to the kernel they came from)
    }
    if (!ref.ranges_of({AxisType::UPCAST}).empty() && replayed) {
      auto fs = ref.full_shape();
      const std::vector<RefUnroll>& unrolls = *replayed;
      pyint unrolled = 1;  // the iterations of the kept unrolls
      for (const RefUnroll& u : unrolls)
        if (u.keep) unrolled *= u.amount;
      bool contiguous = ref_lanes_contiguous(ref);
      // a tile of ours, then the reference's unrolls we keep and its threads on it; nullopt when they do not apply
      auto with_ref_unrolls = [&](Scheduler t) -> std::optional<Scheduler> {
        try {
          for (const RefUnroll& u : unrolls)
            if (u.keep) apply_ref_unroll(t, u);
          for (const Opt& o : ref.applied_opts)
            if (o.op == OptOps::THREAD) t.apply_opt(o);
          return t;
        } catch (const KernelOptError&) {
          return std::nullopt;
        }
      };
      if (Scheduler t = k.copy(); cpu_register_tile(t, unrolled, !contiguous))
        if (auto r = with_ref_unrolls(std::move(t))) return *r;
      // Two more tiles rely on LLVM's SLP vectorizer packing gathered lanes into vectors wider than 8, which it does on
      // a host without AVX-512 (CPU_SLP_MAX_VF's default is no limit there, 8 with AVX-512, where neither tile is
      // measured, so the reference's stays).
      if (!host_has_avx512()) {
        // an outer-product tile of the reduce's two sides (beautiful_mnist's conv 3 and conv 4 weight gradients:
        // 49 -> 17 and 119 -> 30 ms on AVX2)
        if (Scheduler o = k.copy(); cpu_outer_product_tile(o, unrolled))
          if (auto r = with_ref_unrolls(std::move(o))) return *r;
        // a reference tile of two or more axes that gathers every vector (a weight gradient whose unrolled body is
        // too big for an outer product) gets its last upcast grown to 16 lanes (two ymm vectors per gathered row)
        // when its other upcasts give at least 4 rows and the unrolled body stays at most 1,280 FMAs, else twice its
        // last upcast (beautiful_mnist's conv 2 weight gradient: 4 x 4 -> 4 x 16, 375 -> 207 ms on AMD Zen 3 and
        // 257 -> 212 ms against 4 x 8 on Zen 2; with 2 rows, 2 x 16, the SLP vectorizer's code took 2.1 s)
        if (!contiguous && ref.ranges_of({AxisType::UPCAST}).size() >= 2) {
          std::vector<Opt> opts = ref.applied_opts;
          auto last = std::find_if(opts.rbegin(), opts.rend(), [](const Opt& x) { return x.op == OptOps::UPCAST; });
          pyint upcasted = 1;
          for (int64_t a : ref.axes_of({AxisType::UPCAST})) upcasted *= iv(fs[(size_t)a]);
          constexpr pyint kWideLanes = 16, kMinWideRows = 4, kMaxWideBody = 1280;
          pyint lanes = last != opts.rend() && last->arg.is_int() ? last->arg.as_int() : 0, grow = 0;
          if (lanes > 0 && lanes < kWideLanes && kWideLanes % lanes == 0 && upcasted / lanes >= kMinWideRows &&
              upcasted / lanes * kWideLanes * unrolled <= kMaxWideBody)
            grow = kWideLanes / lanes;
          else if (lanes > 0 && upcasted * 2 * unrolled <= kMaxTileBody)
            grow = 2;
          if (grow) {
            last->arg = Arg((long long)(lanes * grow));
            Scheduler w = k0.copy();
            try {
              size_t n = 0;  // the reference's unrolls in order, kept or dropped as on our other tiles
              for (const Opt& x : opts)
                if (x.op != OptOps::UNROLL) w.apply_opt(x);
                else if (const RefUnroll& u = unrolls[n++]; u.keep) apply_ref_unroll(w, u);
              return w;
            } catch (const KernelOptError&) {
            }
          }
        }
      }
    }
  }

  // potentially do more upcasts of non reduce axes based on a heuristic
  bool is_dsp = k.ren->target.device == "DSP";
  std::vector<int64_t> upcasted_axis;
  while (true) {
    auto os = k.output_shape();
    std::vector<sint> v;
    for (int64_t i : k.upcastable_dims()) v.push_back(os[(size_t)i]);
    sint p = sprod(v);
    bool big = p.is_int() ? p.i() >= 1024 : resolve(p.u().ge(PyConst(1024)));
    if (!(big && k.upcast_size() < 32)) break;
    std::vector<std::tuple<pyint, pyint, int64_t, int64_t>> xb_choices;
    std::vector<int64_t> amounts = is_dsp ? (upcasted_axis.empty() ? std::vector<int64_t>{128} : std::vector<int64_t>{})
                                          : std::vector<int64_t>{3, 4};
    auto fs = k.full_shape();
    auto rs = k.rngs();
    auto bufs = k.bufs();
    auto upc = k.ranges_of({AxisType::UPCAST, AxisType::UNROLL});
    // consider all upcastable axes with 3 or 4 upcast (128 on the DSP)
    for (int64_t axis : k.upcastable_dims())
      for (int64_t upcast_amount : amounts) {
        // if we haven't upcasted it, it mods, and buffer has stride 0 on axis while having no stride 0 in the upcasted
        // axis already
        if (std::find(upcasted_axis.begin(), upcasted_axis.end(), axis) != upcasted_axis.end() ||
            iv(fs[(size_t)axis]) % upcast_amount != 0)
          continue;
        const UOp& rng = rs[(size_t)axis];
        bool any = false;
        for (const UOp& b : bufs) {
          UOp idx = b.src(1).get_idx();
          if (in_bs(idx, rng)) continue;
          bool all = true;
          for (const UOp& r2 : upc)
            if (!in_bs(idx, r2)) all = false;
          if (all) any = true;
        }
        if (any) {
          pyint num_strides = 0, sum_strides = 0;
          for (const UOp& b : bufs) {
            UOp idx = b.src(1).get_idx();
            if (in_bs(idx, rng)) num_strides += 1;
            for (const UOp& c : idx.split_uop(Ops::ADD)) {
              if (c == rng) sum_strides += 1;
              if (c.op() == Ops::MUL && c.src(0) == rng && c.src(1).op() == Ops::CONST)
                sum_strides += c.src(1).val().as_int();
              if (c.op() == Ops::MUL && c.src(1) == rng && c.src(0).op() == Ops::CONST)
                sum_strides += c.src(0).val().as_int();
            }
          }
          xb_choices.emplace_back(num_strides, sum_strides, axis, upcast_amount);
        }
      }
    if (xb_choices.empty()) break;
    std::sort(xb_choices.begin(), xb_choices.end());
    k.apply_opt(Opt(OptOps::UPCAST, std::get<2>(xb_choices[0]), Arg((long long)std::get<3>(xb_choices[0]))));
    upcasted_axis.push_back(std::get<2>(xb_choices[0]));
  }

  // if last reduce dim is small(ish), loop unroll the reduce
  // NOTE: this can fail on multireduce with mismatching dimensions, this is okay
  try {
    auto ud = k.unrollable_dims();
    if (!ud.empty() && (k.upcast_size() <= 4 || k.axes_of({AxisType::UNROLL}).empty()) && k.upcast_size() < 64) {
      pyint s = iv(k.full_shape()[(size_t)ud.back()]);
      if (s <= 32) {
        k.apply_opt(Opt(OptOps::UNROLL, (int64_t)ud.size() - 1, Arg(0)));
        // if it's small, upcast a second reduce dimension too
        ud = k.unrollable_dims();
        if (!ud.empty() && s <= 3 && iv(k.full_shape()[(size_t)ud.back()]) <= 3)
          k.apply_opt(Opt(OptOps::UNROLL, (int64_t)ud.size() - 1, Arg(0)));
      } else {
        for (int64_t splits : {4}) {
          if (iv(k.full_shape()[(size_t)ud.back()]) % splits == 0) {
            k.apply_opt(Opt(OptOps::UNROLL, (int64_t)ud.size() - 1, Arg((long long)splits)));
            break;
          }
        }
      }
    }
  } catch (const KernelOptError&) {
  }

  // if nothing at all is upcasted and it's easy to, do an upcast
  for (int64_t splits : {4}) {
    auto ud = k.upcastable_dims();
    if (!k.upcasted() && !ud.empty() && iv(k.full_shape()[(size_t)ud.back()]) % splits == 0)
      k.apply_opt(Opt(OptOps::UPCAST, ud.back(), Arg((long long)splits)));
  }

  // **** local groups ****
  if (k.ren->has_local) {
    if (NOLOCALS.value()) {
      k.apply_opt(Opt(OptOps::NOLOCALS));
    } else {
      // prioritize making expand axes local
      std::vector<std::pair<bool, int64_t>> ranking;
      auto rs = k.rngs();
      auto bufs = k.bufs();
      for (int64_t axis : k.axes_of({AxisType::GLOBAL, AxisType::WEAK})) {
        if (rs[(size_t)axis].src(0).op() != Ops::CONST) continue;
        bool any = false;
        for (const UOp& b : bufs) {
          UOp idx = b.src(1).get_idx();
          if (!in_bs(idx, rs[(size_t)axis])) any = true;
        }
        ranking.emplace_back(any, axis);
      }
      std::stable_sort(ranking.begin(), ranking.end(), [](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first > b.first;
        return a.second > b.second;
      });
      std::vector<std::pair<int64_t, int64_t>> to_local;
      auto fs = k.full_shape();
      for (const auto& [_, axis] : ranking) {
        pyint local_size = 1;
        for (const auto& [a, sz] : to_local) local_size *= sz;
        std::vector<int64_t> cands;
        if (axis == 0) cands.push_back(32);
        for (int64_t x : {16, 8, 4, 3, 2}) cands.push_back(x);
        for (int64_t x : cands)
          if (iv(fs[(size_t)axis]) % x == 0 && local_size * x <= 128) {
            to_local.emplace_back(axis, x);
            break;
          }
      }
      if (to_local.size() > 3) to_local.resize(3);
      std::sort(to_local.begin(), to_local.end());
      int64_t deleted_shape = 0;
      for (auto [axis, local_sz] : to_local) {
        axis = axis - deleted_shape;
        bool will_delete_shape = local_sz == iv(k.full_shape()[(size_t)axis]);
        k.apply_opt(Opt(OptOps::LOCAL, axis, Arg((long long)local_sz)));
        if (will_delete_shape) deleted_shape += 1;
      }
    }
  }

  // **** threading ****
  if (k.ren->has_threads && k.ren->global_max.has_value()) {
    for (int64_t threads : {32, 16, 12, 8, 6, 5, 4, 3, 2}) {
      // Skip if too many threads. Heuristic: use about 128K ops per thread
      sint p = sprod(k.full_shape());
      bool too_few = p.is_int() ? floordiv(p.i(), (pyint)(128 << 10)) < threads
                                : resolve(p.u().floordiv(PyConst((pyint)(128 << 10))).lt(PyConst(threads)));
      if (threads > (*k.ren->global_max)[0] || too_few) continue;
      auto fs = k.full_shape();
      for (int64_t axis : k.axes_of({AxisType::WEAK})) {
        if (iv(fs[(size_t)axis]) % threads == 0) {
          try {
            k.apply_opt(Opt(OptOps::THREAD, axis, Arg((long long)threads)));
          } catch (const KernelOptError&) {
          }
          break;
        }
      }
      if (!k.applied_opts.empty() && k.applied_opts.back().op == OptOps::THREAD) break;
    }
  }
  return k;
}

Scheduler hand_coded_optimizations(const Scheduler& k0) { return hand_coded(k0, CPU_TILE.value() != 0); }

bool cpu_tiles_apply(const Renderer& ren) {
  return CPU_TILE.value() && !ren.has_local && ren.target.device == "CPU" && ren.target.renderer == "CLANG";
}

}  // namespace tg
