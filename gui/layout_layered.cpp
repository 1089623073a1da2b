// A small layered (Sugiyama-style) layout: the fallback when Graphviz is over its budget or the graph is too big.
// Ranks by longest path from the leaves, pulled up towards the users; long edges get virtual nodes; a few barycenter
// sweeps order each rank; x positions are the closest to the neighbours' mean that keep the order and the spacing
// (isotonic regression with separation, pool-adjacent-violators). Every pass is linear or n log n.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "gui/layout.h"

namespace tv {

namespace {
constexpr double kNodeSep = 18, kRankSep = 26, kVirtualW = 8;

// x_i closest (least squares) to want_i with x_{i+1} >= x_i + (w_i + w_{i+1})/2 + sep
void place_row(const std::vector<int>& row, const std::vector<double>& w, std::vector<double>& x,
               const std::vector<double>& want) {
  size_t n = row.size();
  if (!n) return;
  std::vector<double> off(n, 0);
  for (size_t i = 1; i < n; i++) off[i] = off[i - 1] + (w[row[i - 1]] + w[row[i]]) / 2 + kNodeSep;
  // pool adjacent violators on y_i = want_i - off_i (non-decreasing fit)
  struct Block {
    double sum;
    size_t count;
  };
  std::vector<Block> blocks;
  for (size_t i = 0; i < n; i++) {
    blocks.push_back({want[row[i]] - off[i], 1});
    while (blocks.size() > 1) {
      Block& b = blocks.back();
      Block& a = blocks[blocks.size() - 2];
      if (a.sum / a.count <= b.sum / b.count) break;
      a.sum += b.sum, a.count += b.count;
      blocks.pop_back();
    }
  }
  size_t i = 0;
  for (const Block& b : blocks)
    for (size_t k = 0; k < b.count; k++, i++) x[row[i]] = b.sum / b.count + off[i];
}
}  // namespace

EdgePath simple_edge(Pt s, double sw, double sh, Pt d, double dw, double dh, int port, int n_ports) {
  (void)sw;
  Pt a{s.x, s.y - sh / 2};  // top of the source
  double spread = n_ports > 1 ? std::min(dw * 0.8, 16.0 * (n_ports - 1)) : 0;
  Pt b{d.x - spread / 2 + (n_ports > 1 ? spread * port / (n_ports - 1) : 0), d.y + dh / 2};  // bottom of the user
  double dy = std::max(std::abs(a.y - b.y) * 0.45, 12.0);
  return EdgePath{{a, {a.x, a.y - dy}, {b.x, b.y + dy}, b}, true};
}

std::vector<int> sources_first(const std::vector<std::vector<int>>& srcs, const std::vector<std::vector<int>>& users) {
  size_t n = srcs.size();
  std::vector<int> indeg(n), order;
  order.reserve(n);
  for (size_t v = 0; v < n; v++) indeg[v] = (int)srcs[v].size();
  for (size_t v = 0; v < n; v++)
    if (!indeg[v]) order.push_back((int)v);
  for (size_t i = 0; i < order.size(); i++)
    for (int u : users[order[i]])
      if (--indeg[u] == 0) order.push_back(u);
  if (order.size() < n)
    for (size_t v = 0; v < n; v++)
      if (indeg[v] > 0) order.push_back((int)v);
  return order;
}

std::vector<int> layer_ranks(const LayoutGraph& g) {
  size_t n = g.nodes.size();
  std::vector<std::vector<int>> srcs(n), users(n);
  for (const LEdge& e : g.edges) srcs[e.dst].push_back(e.src), users[e.src].push_back(e.dst);
  std::vector<int> order = sources_first(srcs, users);

  // ranks: longest path from the leaves, then every node pulled up right under its lowest user
  std::vector<int> rank(n, 0);
  for (int v : order)
    for (int s : srcs[v]) rank[v] = std::max(rank[v], rank[s] + 1);
  for (size_t i = order.size(); i-- > 0;) {
    int v = order[i];
    int lo = INT32_MAX;
    for (int u : users[v]) lo = std::min(lo, rank[u] - 1);
    if (lo != INT32_MAX && lo > rank[v]) rank[v] = lo;
  }
  return rank;
}

Layout layout_layered(const LayoutGraph& g) {
  auto t0 = std::chrono::steady_clock::now();
  size_t n = g.nodes.size();
  Layout L;
  L.engine = "layered";
  L.pos.resize(n);
  L.edges.resize(g.edges.size());
  if (!n) return L;

  std::vector<std::vector<int>> srcs(n), users(n);
  for (const LEdge& e : g.edges) srcs[e.dst].push_back(e.src), users[e.src].push_back(e.dst);
  std::vector<int> rank = layer_ranks(g);
  int max_rank = 0;
  for (int r : rank) max_rank = std::max(max_rank, r);

  // virtual nodes along long edges (capped: beyond the cap long edges are drawn straight)
  std::vector<double> w(n), h(n);
  for (size_t v = 0; v < n; v++) w[v] = g.nodes[v].w, h[v] = g.nodes[v].h;
  std::vector<int> vrank = rank;
  std::vector<std::vector<int>> chain(g.edges.size());  // virtual nodes of each edge, bottom to top
  std::vector<std::vector<int>> down(n), up(n);         // adjacency including virtual nodes
  size_t budget = 4 * n + 1000;
  for (size_t ei = 0; ei < g.edges.size(); ei++) {
    const LEdge& e = g.edges[ei];
    int span = rank[e.dst] - rank[e.src];
    int prev = e.src;
    if (span > 1 && (size_t)(span - 1) <= budget) {
      budget -= span - 1;
      for (int r = rank[e.src] + 1; r < rank[e.dst]; r++) {
        int v = (int)w.size();
        w.push_back(kVirtualW), h.push_back(0), vrank.push_back(r);
        down.emplace_back(), up.emplace_back();
        chain[ei].push_back(v);
        up[prev].push_back(v), down[v].push_back(prev);
        prev = v;
      }
    }
    up[prev].push_back(e.dst), down[e.dst].push_back(prev);
  }
  size_t total = w.size();

  // rows in the initial order: depth-first from the roots keeps related nodes together
  std::vector<std::vector<int>> rows(max_rank + 1);
  {
    std::vector<char> seen(total, 0);
    std::vector<int> st;
    for (size_t v = total; v-- > 0;) st.push_back((int)v);  // anything unreachable from a root, last
    for (size_t v = n; v-- > 0;)
      if (users[v].empty()) st.push_back((int)v);
    while (!st.empty()) {
      int v = st.back();
      st.pop_back();
      if (seen[v]) continue;
      seen[v] = 1;
      rows[vrank[v]].push_back(v);
      for (size_t k = down[v].size(); k-- > 0;)
        if (!seen[down[v][k]]) st.push_back(down[v][k]);
    }
  }
  std::vector<double> x(total, 0), idx(total, 0);
  auto index_rows = [&] {
    for (auto& row : rows)
      for (size_t i = 0; i < row.size(); i++) idx[row[i]] = (double)i;
  };
  index_rows();
  // barycenter sweeps: upwards (by the sources), then downwards (by the users)
  for (int sweep = 0; sweep < 6; sweep++) {
    bool upward = sweep % 2 == 0;
    for (int ri = 0; ri <= max_rank; ri++) {
      int r = upward ? ri : max_rank - ri;
      auto& row = rows[r];
      std::vector<double> bary(row.size());
      for (size_t i = 0; i < row.size(); i++) {
        const auto& nb = upward ? down[row[i]] : up[row[i]];
        if (nb.empty()) {
          bary[i] = idx[row[i]];
          continue;
        }
        double s = 0;
        for (int u : nb) s += idx[u];
        bary[i] = s / nb.size();
      }
      std::vector<size_t> perm(row.size());
      std::iota(perm.begin(), perm.end(), 0);
      std::stable_sort(perm.begin(), perm.end(), [&](size_t a, size_t b) { return bary[a] < bary[b]; });
      std::vector<int> nr(row.size());
      for (size_t i = 0; i < row.size(); i++) nr[i] = row[perm[i]];
      row = std::move(nr);
      for (size_t i = 0; i < row.size(); i++) idx[row[i]] = (double)i;
    }
  }
  // x: packed, then pulled towards the neighbours' mean, alternating directions
  {
    std::vector<double> want(total, 0);
    for (auto& row : rows) {
      double cx = 0;
      for (size_t i = 0; i < row.size(); i++) {
        if (i) cx += (w[row[i - 1]] + w[row[i]]) / 2 + kNodeSep;
        x[row[i]] = cx;
      }
      double mid = cx / 2;
      for (int v : row) x[v] -= mid;
    }
    for (int it = 0; it < 8; it++) {
      bool upward = it % 2 == 0;
      for (int ri = 0; ri <= max_rank; ri++) {
        int r = upward ? ri : max_rank - ri;
        for (int v : rows[r]) {
          double s = 0;
          int c = 0;
          for (int u : down[v]) s += x[u], c++;
          for (int u : up[v]) s += x[u], c++;
          want[v] = c ? s / c : x[v];
        }
        place_row(rows[r], w, x, want);
      }
    }
  }
  // y: rank 0 at the bottom
  std::vector<double> row_h(max_rank + 1, 0), row_y(max_rank + 1, 0);
  for (size_t v = 0; v < total; v++) row_h[vrank[v]] = std::max(row_h[vrank[v]], h[v]);
  double y = 0;
  for (int r = max_rank; r >= 0; r--) {
    row_y[r] = y + row_h[r] / 2;
    y += row_h[r] + kRankSep;
  }
  double minx = 1e300, maxx = -1e300;
  for (size_t v = 0; v < n; v++) {
    L.pos[v] = {x[v], row_y[vrank[v]]};
    minx = std::min(minx, x[v] - w[v] / 2), maxx = std::max(maxx, x[v] + w[v] / 2);
  }
  for (size_t v = 0; v < n; v++) L.pos[v].x -= minx;
  L.width = maxx - minx, L.height = y - kRankSep;

  // edges: through their virtual nodes, vertical tangents at every bend
  std::vector<int> nports(n, 0);
  for (const LEdge& e : g.edges) nports[e.dst]++;
  std::vector<std::vector<std::pair<int, size_t>>> in_by_port(n);
  for (size_t ei = 0; ei < g.edges.size(); ei++) in_by_port[g.edges[ei].dst].push_back({g.edges[ei].port, ei});
  std::vector<int> slot(g.edges.size(), 0);
  for (auto& v : in_by_port) {
    std::sort(v.begin(), v.end());
    for (size_t i = 0; i < v.size(); i++) slot[v[i].second] = (int)i;
  }
  for (size_t ei = 0; ei < g.edges.size(); ei++) {
    const LEdge& e = g.edges[ei];
    EdgePath p =
        simple_edge(L.pos[e.src], w[e.src], h[e.src], L.pos[e.dst], w[e.dst], h[e.dst], slot[ei], nports[e.dst]);
    if (!chain[ei].empty()) {
      std::vector<Pt> via{p.pts.front()};
      for (int v : chain[ei]) via.push_back({x[v] - minx, row_y[vrank[v]]});
      via.push_back(p.pts.back());
      // a Catmull-Rom curve through the virtual nodes, leaving and entering vertically
      size_t m = via.size();
      auto at = [&](long i) -> Pt {
        if (i < 0) return {via[0].x, via[0].y + (via[0].y - via[1].y)};
        if (i >= (long)m) return {via[m - 1].x, via[m - 1].y - (via[m - 2].y - via[m - 1].y)};
        return via[i];
      };
      EdgePath q{{via[0]}, true};
      for (long i = 0; i + 1 < (long)m; i++) {
        Pt p0 = at(i - 1), p1 = at(i), p2 = at(i + 1), p3 = at(i + 2);
        q.pts.push_back({p1.x + (p2.x - p0.x) / 6, p1.y + (p2.y - p0.y) / 6});
        q.pts.push_back({p2.x - (p3.x - p1.x) / 6, p2.y - (p3.y - p1.y) / 6});
        q.pts.push_back(p2);
      }
      p = std::move(q);
    }
    L.edges[ei] = std::move(p);
  }
  L.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return L;
}

}  // namespace tv
