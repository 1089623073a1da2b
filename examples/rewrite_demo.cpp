// rewrite_demo: real rewrites with recording on. Builds the index expressions a compiler meets (a 2d convolution
// with padding and stride, a reshape through a permute, a gated load) and runs the reference's symbolic passes on
// them as named graph_rewrites inside trace contexts. Run with VIZ=-1 (make demo does) to record a trace.
//
//   VIZ=-1 VIZ_PATH=demo.trace.db ./rewrite_demo        then:  tinyviz-cli stats demo.trace.db --top 20
#include <cstdio>
#include <string>
#include <vector>

#include "lib/uop/rewrite.h"
#include "lib/uop/symbolic.h"
#include "lib/uop/track.h"
#include "lib/uop/weak.h"

using namespace tg;

static UOp c(pyint v) { return UOp::const_(PyConst(v)); }

// the input index of conv2d(N,CI,H,W) with a KHxKW kernel, stride s, padding p, as the scheduler builds it: a gated
// index (valid.where(idx, Invalid)) over output ranges and reduce ranges
static UOp conv_index(int64_t N, int64_t CI, int64_t H, int64_t W, int64_t CO, int64_t K, int64_t s, int64_t p) {
  int64_t OH = (H + 2 * p - K) / s + 1, OW = (W + 2 * p - K) / s + 1;
  UOp n = UOp::range(N, 0, AxisType::LOOP), co = UOp::range(CO, 1, AxisType::LOOP);
  UOp oy = UOp::range(OH, 2, AxisType::LOOP), ox = UOp::range(OW, 3, AxisType::LOOP);
  UOp ci = UOp::range(CI, 4, AxisType::REDUCE), ky = UOp::range(K, 5, AxisType::REDUCE), kx = UOp::range(K, 6, AxisType::REDUCE);
  UOp iy = oy * c(s) + ky - c(p), ix = ox * c(s) + kx - c(p);
  UOp valid = (iy >= c(0)) & (iy < c(H)) & (ix >= c(0)) & (ix < c(W));
  UOp idx = ((n * c(CI) + ci) * c(H) + iy) * c(W) + ix;
  (void)co;
  return idx.valid(valid);
}

// reshape (A*B*C) -> (A, B, C), permute, flatten: the index math movement ops turn into
static UOp reshape_index(int64_t A, int64_t B, int64_t C) {
  UOp i = UOp::range(A * B * C, 0, AxisType::LOOP);
  UOp a = i.floordiv(c(B * C)), b = i.floordiv(c(C)) % c(B), cc = i % c(C);
  // permute (a, b, c) -> (c, a, b), then flatten back
  return (cc * c(A) + a) * c(B) + b;
}

// a sum of terms over split ranges that recombine: (x//4)*4 + x%4, and nested mods
static UOp recombine_index(int64_t n) {
  UOp x = UOp::range(n, 0, AxisType::LOOP), y = UOp::range(8, 1, AxisType::LOOP);
  return x.floordiv(c(4)) * c(4) + x % c(4) + ((x + y * c(n)) % c(n * 8)).floordiv(c(n)) * c(3);
}

int main() {
  int exprs = 0;
  {
    track::Group g("conv_indexing");
    g.rename("Conv2d indexing");
    for (int64_t k : {3, 5})
      for (int64_t s : {1, 2})
        for (int64_t p : {0, 1, 2}) {
          UOp idx = conv_index(4, 8, 28, 28, 16, k, s, p);
          UOp out = graph_rewrite(idx, sym(), {.name = "initial symbolic"});
          out = graph_rewrite(out, pm_simplify_valid() + sym(), {.name = "simplify valid"});
          out = graph_rewrite(out, pm_lower_index_dtype() + sym(), {.name = "lower all index dtypes"});
          exprs++;
        }
  }
  {
    track::Group g("movement_indexing");
    g.rename("Reshape/permute indexing");
    for (int64_t a : {2, 3, 4, 16})
      for (int64_t b : {4, 6, 8})
        for (int64_t cc : {1, 4, 32}) {
          UOp idx = reshape_index(a, b, cc);
          UOp out = graph_rewrite(idx, symbolic(), {.name = "simplify"});
          out = graph_rewrite(out, sym(), {.name = "final symbolic"});
          exprs++;
        }
  }
  {
    track::Group g("divmod_recombine");
    g.rename("Div/mod recombination");
    std::vector<UOp> all;
    for (int64_t n : {4, 8, 12, 16, 64}) all.push_back(recombine_index(n));
    UOp out = graph_rewrite(UOp::sink(all), sym(), {.name = "fold div and mod"});
    exprs += (int)all.size();
    (void)out;
  }
  {
    // bottom-up and walk passes: substitute ranges by constants, as kernel specialization does
    track::Group g("specialize");
    g.rename("Specialize ranges");
    UOp idx = conv_index(1, 4, 16, 16, 4, 3, 1, 1);
    std::vector<std::pair<UOp, UOp>> sub;
    for (const UOp& u : idx.toposort())
      if (u.op() == Ops::RANGE && u.arg()[0].as_int() == 0) sub.push_back({u, c(0)});
    UOp s1 = idx.substitute(sub, "substitute n=0");
    UOp s2 = idx.substitute(sub, "substitute n=0 (walk)", true);
    graph_rewrite(s1, sym(), {.name = "simplify specialized"});
    graph_rewrite(s2, sym(), {.name = "simplify specialized (walk)"});
    exprs += 2;
  }
  std::printf("rewrite_demo: simplified %d index expressions\n", exprs);
  return 0;
}
