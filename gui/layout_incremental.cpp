// Incremental layout: nodes that a previous frame's layout placed keep their centre; a rebuilt node takes the place of
// the node it replaced; the remaining (new) nodes go below their users / above their sources, near their neighbours'
// mean x: at a free spot close by, or, when there is none, in room made by moving the nodes of that row band apart.
// A node that did not keep its exact place then moves right past any box it still covers.
// Edges between nodes that did not move keep their previous route.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "gui/layout.h"

namespace tv {

namespace {
constexpr double kGapY = 26, kGapX = 14;

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

  std::vector<int> placed_list;
  for (size_t i = 0; i < n; i++)
    if (placed[i]) placed_list.push_back((int)i);
  auto free_at = [&](double x, double y, double w, double h) {
    for (int i : placed_list)
      if (std::abs(L.pos[i].x - x) < (g.nodes[i].w + w) / 2 + kGapX &&
          std::abs(L.pos[i].y - y) < (g.nodes[i].h + h) / 2 + kGapY / 2)
        return false;
    for (const Box& o : obstacles)
      if (std::abs(o.c.x - x) < (o.w + w) / 2 + kGapX && std::abs(o.c.y - y) < (o.h + h) / 2 + kGapY / 2) return false;
    return true;
  };

  // 2. place the new nodes next to their placed neighbours
  std::vector<std::vector<int>> srcs(n), users(n);
  for (const LEdge& e : g.edges) srcs[e.dst].push_back(e.src), users[e.src].push_back(e.dst);
  std::vector<int> order = sources_first(srcs, users);
  double miny = 1e300, maxy = -1e300, minx = 1e300;
  for (size_t i = 0; i < n; i++)
    if (placed[i])
      miny = std::min(miny, L.pos[i].y), maxy = std::max(maxy, L.pos[i].y), minx = std::min(minx, L.pos[i].x);
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
    auto put = [&](double x) {
      L.pos[v] = {x, y};
      placed[v] = 1;
      placed_list.push_back(v);
      return true;
    };
    // a free spot close by
    double step = std::max(24.0, nd.w / 2);
    for (int k = 0; k < 7; k++) {
      double x = want + (k % 2 ? -1 : 1) * ((k + 1) / 2) * step;
      if (free_at(x, y, nd.w, nd.h)) return put(x);
    }
    // none: make room in this row band, moving what is right of the spot right and what is left of it left (each
    // side by one amount, so the nodes there keep their spacing; rows above and below stay where they are)
    double band_lo = y - nd.h / 2 - kGapY / 2, band_hi = y + nd.h / 2 + kGapY / 2;
    double need_l = want - nd.w / 2 - kGapX, need_r = want + nd.w / 2 + kGapX, shift_l = 0, shift_r = 0;
    std::vector<int> band;
    for (int i : placed_list) {
      double top = L.pos[i].y - g.nodes[i].h / 2, bottom = L.pos[i].y + g.nodes[i].h / 2;
      if (bottom < band_lo || top > band_hi) continue;
      band.push_back(i);
      if (L.pos[i].x >= want)
        shift_r = std::max(shift_r, need_r - (L.pos[i].x - g.nodes[i].w / 2));
      else
        shift_l = std::max(shift_l, (L.pos[i].x + g.nodes[i].w / 2) - need_l);
    }
    for (int i : band) {
      double d = L.pos[i].x >= want ? shift_r : -shift_l;
      if (d == 0) continue;
      L.pos[i].x += d;
      exact[i] = 0;  // its edges are routed again
    }
    return put(want);
  };
  // users first: what a match brings in grows down from the replacement, which sits where the matched node was
  auto has_placed_user = [&](int v) {
    return std::any_of(users[v].begin(), users[v].end(), [&](int u) { return placed[u]; });
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = order.size(); i-- > 0;)
      if (!placed[order[i]] && has_placed_user(order[i])) progress |= try_place(order[i]);
    for (int v : order)
      if (!placed[v]) progress |= try_place(v);
  }
  // unconnected to anything placed: a row below everything
  double x = minx;
  for (int v : order)
    if (!placed[v]) {
      L.pos[v] = {x + g.nodes[v].w / 2, maxy + 80};
      x += g.nodes[v].w + kGapX;
      placed[v] = 1;
    }

  // 2b. no two boxes overlap: a node that did not keep its exact place (it took the place of a node of another
  // size, was placed, or moved with its row band) moves right past whatever box it covers. Kept nodes come from a
  // layout without overlaps, so only those need checking.
  auto covers = [&](size_t u, size_t v) {
    return std::abs(L.pos[u].x - L.pos[v].x) < (g.nodes[u].w + g.nodes[v].w) / 2 + kGapX / 2 &&
           std::abs(L.pos[u].y - L.pos[v].y) < (g.nodes[u].h + g.nodes[v].h) / 2 + 2;
  };
  for (size_t v = 0; v < n; v++) {
    if (exact[v]) continue;
    for (size_t moves = 0; moves < n; moves++) {
      size_t hit = n;
      for (size_t u = 0; u < n && hit == n; u++)
        if (u != v && covers(u, v)) hit = u;
      if (hit == n) break;
      L.pos[v].x = L.pos[hit].x + (g.nodes[hit].w + g.nodes[v].w) / 2 + kGapX;
    }
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
