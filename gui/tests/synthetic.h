// UOp-shaped synthetic DAGs for layout tests and timings: each node has 1-3 sources, mostly among the previous few
// nodes (dataflow), sometimes far back; labels of 2-4 lines.
#pragma once
#include <random>

#include "gui/layout.h"

namespace tv {

inline LayoutGraph synthetic_graph(int n, unsigned seed = 1) {
  std::mt19937 rng(seed);
  LayoutGraph g;
  for (int i = 0; i < n; i++) {
    g.nodes.push_back({{i + 1, 0}, 70.0 + rng() % 90, 30.0 + 13.0 * (rng() % 3)});
    if (i < 4) continue;
    int k = 1 + rng() % 3;
    for (int p = 0; p < k; p++) {
      int back = rng() % 20 == 0 ? 1 + rng() % i : 1 + rng() % std::min(i, 8);
      g.edges.push_back({i - back, i, p});
    }
  }
  return g;
}

}  // namespace tv
