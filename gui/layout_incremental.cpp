// Incremental layout: nodes that a previous frame's layout placed keep their centre; a rebuilt node takes the place of
// the node it replaced; the remaining (new) nodes go above their sources / below their users, at the first free spot
// near their neighbours' mean x. Edges between nodes that did not move keep their previous route.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "gui/layout.h"

namespace tv {

namespace {
constexpr double kGapY = 26, kGapX = 14, kCell = 96;

// boxes in a uniform grid, for "is this spot free"
class Grid {
 public:
  void add(const Box& b) {
    boxes_.push_back(b);
    each_cell(b, [&](int64_t k) { cells_[k].push_back(boxes_.size() - 1); });
  }
  bool free(const Box& b) const {
    bool ok = true;
    each_cell(b, [&](int64_t k) {
      if (!ok) return;
      auto it = cells_.find(k);
      if (it == cells_.end()) return;
      for (size_t i : it->second) {
        const Box& o = boxes_[i];
        if (std::abs(o.c.x - b.c.x) < (o.w + b.w) / 2 + kGapX && std::abs(o.c.y - b.c.y) < (o.h + b.h) / 2 + kGapY / 2) {
          ok = false;
          return;
        }
      }
    });
    return ok;
  }

 private:
  template <class F>
  void each_cell(const Box& b, F f) const {
    int64_t x0 = (int64_t)std::floor((b.c.x - b.w / 2 - kGapX) / kCell), x1 = (int64_t)std::floor((b.c.x + b.w / 2 + kGapX) / kCell);
    int64_t y0 = (int64_t)std::floor((b.c.y - b.h / 2 - kGapY) / kCell), y1 = (int64_t)std::floor((b.c.y + b.h / 2 + kGapY) / kCell);
    for (int64_t y = y0; y <= y1; y++)
      for (int64_t x = x0; x <= x1; x++) f(y * 1000003 + x);
  }
  std::vector<Box> boxes_;
  std::unordered_map<int64_t, std::vector<size_t>> cells_;
};

struct EdgeKey {
  NodeKey s, d;
  int port;
  bool operator==(const EdgeKey&) const = default;
};
struct EdgeKeyHash {
  size_t operator()(const EdgeKey& k) const { return NodeKeyHash()(k.s) * 31 ^ NodeKeyHash()(k.d) * 7 ^ k.port; }
};
}  // namespace

Layout layout_incremental(const LayoutGraph& g, const LayoutGraph& bg, const Layout& base,
                          const std::unordered_map<int64_t, int64_t>& inherit, const std::vector<Box>& obstacles,
                          double min_kept) {
  auto t0 = std::chrono::steady_clock::now();
  size_t n = g.nodes.size();
  Layout L;
  L.pos.resize(n);
  L.edges.resize(g.edges.size());
  std::unordered_map<NodeKey, size_t, NodeKeyHash> in_base, in_new;
  for (size_t i = 0; i < bg.nodes.size(); i++) in_base[bg.nodes[i].key] = i;
  for (size_t i = 0; i < n; i++) in_new[g.nodes[i].key] = i;

  // 1. keep or inherit positions
  std::vector<char> placed(n, 0), exact(n, 0);
  std::unordered_set<size_t> claimed;
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    const NodeKey& k = g.nodes[i].key;
    auto it = in_base.find(k);
    if (it == in_base.end()) {
      // a rebuilt node (or a leaf drawn for a rebuilt user) takes the spot of what it replaced, if that is gone
      NodeKey old = k;
      if (auto r = inherit.find(k.id); r != inherit.end()) old.id = r->second;
      if (k.via)
        if (auto r = inherit.find(k.via); r != inherit.end()) old.via = r->second;
      if (!(old == k)) it = in_base.find(old);
      if (it != in_base.end() && (in_new.count(it->first) || claimed.count(it->second))) it = in_base.end();
    } else {
      exact[i] = 1;
    }
    if (it == in_base.end()) continue;
    claimed.insert(it->second);
    L.pos[i] = base.pos[it->second];
    placed[i] = 1;
    kept++;
  }
  L.kept = n ? (double)kept / n : 1.0;
  if (n && L.kept < min_kept) return Layout{};  // too different: the caller lays out from scratch

  Grid grid;
  for (const Box& b : obstacles) grid.add(b);
  for (size_t i = 0; i < n; i++)
    if (placed[i]) grid.add({L.pos[i], g.nodes[i].w, g.nodes[i].h});

  // 2. place the new nodes next to their placed neighbours
  std::vector<std::vector<int>> srcs(n), users(n);
  for (const LEdge& e : g.edges) srcs[e.dst].push_back(e.src), users[e.src].push_back(e.dst);
  std::vector<int> order;  // sources first
  {
    std::vector<int> indeg(n);
    for (size_t v = 0; v < n; v++) indeg[v] = (int)srcs[v].size();
    for (size_t v = 0; v < n; v++)
      if (!indeg[v]) order.push_back((int)v);
    for (size_t i = 0; i < order.size(); i++)
      for (int u : users[order[i]])
        if (--indeg[u] == 0) order.push_back(u);
    for (size_t v = 0; v < n; v++)
      if (indeg[v] > 0) order.push_back((int)v);
  }
  double miny = 1e300, maxy = -1e300, minx = 1e300;
  for (size_t i = 0; i < n; i++)
    if (placed[i]) miny = std::min(miny, L.pos[i].y), maxy = std::max(maxy, L.pos[i].y), minx = std::min(minx, L.pos[i].x);
  if (miny > maxy) miny = maxy = minx = 0;

  auto try_place = [&](int v) -> bool {
    const LNode& nd = g.nodes[v];
    double sx = 0, top = 1e300, bottom = -1e300;
    int cnt = 0;
    for (int s : srcs[v])
      if (placed[s]) sx += L.pos[s].x, cnt++, top = std::min(top, L.pos[s].y - g.nodes[s].h / 2);
    for (int u : users[v])
      if (placed[u]) sx += L.pos[u].x, cnt++, bottom = std::max(bottom, L.pos[u].y + g.nodes[u].h / 2);
    if (!cnt) return false;
    double y;
    if (top < 1e300 && bottom > -1e300) {
      // between its users (above) and its sources (below) when there is room, else above the sources
      double lo = bottom + kGapY + nd.h / 2, hi = top - kGapY - nd.h / 2;
      y = lo <= hi ? (lo + hi) / 2 : hi;
    } else if (top < 1e300) {
      y = top - kGapY - nd.h / 2;
    } else {
      y = bottom + kGapY + nd.h / 2;
    }
    double want = sx / cnt;
    double step = std::max(24.0, nd.w / 2);
    for (int row = 0; row < 6; row++) {
      double yy = y + (row % 2 ? -1 : 1) * ((row + 1) / 2) * (nd.h + kGapY);
      for (int k = 0; k < 80; k++) {
        double dx = (k % 2 ? -1 : 1) * ((k + 1) / 2) * step;
        Box b{{want + dx, yy}, nd.w, nd.h};
        if (grid.free(b)) {
          L.pos[v] = b.c;
          grid.add(b);
          placed[v] = 1;
          return true;
        }
      }
    }
    L.pos[v] = {want, y};  // crowded: overlap rather than fly off
    grid.add({L.pos[v], nd.w, nd.h});
    placed[v] = 1;
    return true;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int v : order)
      if (!placed[v]) progress |= try_place(v);
    for (size_t i = order.size(); i-- > 0;)
      if (!placed[order[i]]) progress |= try_place(order[i]);
  }
  // unconnected to anything placed: a row below everything
  double x = minx;
  for (int v : order)
    if (!placed[v]) {
      L.pos[v] = {x + g.nodes[v].w / 2, maxy + 80};
      x += g.nodes[v].w + kGapX;
      placed[v] = 1;
    }

  // 3. edges: reuse the previous route when both ends stayed exactly where they were
  std::unordered_map<EdgeKey, size_t, EdgeKeyHash> base_edges;
  for (size_t i = 0; i < bg.edges.size() && i < base.edges.size(); i++)
    base_edges[{bg.nodes[bg.edges[i].src].key, bg.nodes[bg.edges[i].dst].key, bg.edges[i].port}] = i;
  std::vector<int> nports(n, 0);
  std::vector<std::vector<std::pair<int, size_t>>> in_by_port(n);
  for (size_t ei = 0; ei < g.edges.size(); ei++) in_by_port[g.edges[ei].dst].push_back({g.edges[ei].port, ei});
  std::vector<int> slot(g.edges.size(), 0);
  for (size_t v = 0; v < n; v++) {
    std::sort(in_by_port[v].begin(), in_by_port[v].end());
    nports[v] = (int)in_by_port[v].size();
    for (size_t i = 0; i < in_by_port[v].size(); i++) slot[in_by_port[v][i].second] = (int)i;
  }
  for (size_t ei = 0; ei < g.edges.size(); ei++) {
    const LEdge& e = g.edges[ei];
    if (exact[e.src] && exact[e.dst]) {
      auto it = base_edges.find({g.nodes[e.src].key, g.nodes[e.dst].key, e.port});
      if (it != base_edges.end()) {
        L.edges[ei] = base.edges[it->second];
        continue;
      }
    }
    L.edges[ei] = simple_edge(L.pos[e.src], g.nodes[e.src].w, g.nodes[e.src].h, L.pos[e.dst], g.nodes[e.dst].w,
                              g.nodes[e.dst].h, slot[ei], nports[e.dst]);
  }
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (size_t i = 0; i < n; i++) {
    x0 = std::min(x0, L.pos[i].x - g.nodes[i].w / 2), x1 = std::max(x1, L.pos[i].x + g.nodes[i].w / 2);
    y0 = std::min(y0, L.pos[i].y - g.nodes[i].h / 2), y1 = std::max(y1, L.pos[i].y + g.nodes[i].h / 2);
  }
  L.width = n ? x1 - x0 : 0, L.height = n ? y1 - y0 : 0;
  L.engine = "incremental";
  L.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return L;
}

}  // namespace tv
