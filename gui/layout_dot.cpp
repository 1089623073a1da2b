// Graphviz `dot` through libgvc/libcgraph, the only translation unit that includes Graphviz headers.
// cgraph is not thread-safe (even lookups reorganise its splay trees), so every call is made under one mutex, with
// one GVC_t for the process. Graphviz 2.42 takes char* everywhere: strings are passed as mutable copies.
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "gui/layout.h"

namespace tv {

namespace {
std::mutex g_gv_mutex;
std::string g_gv_errors;

int collect_error(char* msg) {
  g_gv_errors += msg;
  return 0;
}

GVC_t* gvc() {
  static GVC_t* c = [] {
    agseterr(AGERR);  // warnings (e.g. "nslimit reached") are expected with the tuning below
    agseterrf(collect_error);
    return gvContext();
  }();
  return c;
}

// Graphviz 2.42 wants char*: keep mutable copies alive for the duration of a call
struct Str {
  std::vector<char> b;
  explicit Str(const std::string& s) : b(s.begin(), s.end()) { b.push_back('\0'); }
  operator char*() { return b.data(); }
};

Agsym_t* decl(Agraph_t* g, int kind, const std::string& name, const std::string& dflt) {
  Str n(name), d(dflt);
  return agattr(g, kind, n, d);
}
void set(void* obj, Agsym_t* sym, const std::string& v) {
  Str s(v);
  agxset(obj, sym, s);
}
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}
}  // namespace

size_t dot_work(const LayoutGraph& g) {
  std::vector<int> rank = layer_ranks(g);
  size_t work = g.nodes.size();
  std::vector<size_t> width;  // nodes and virtual nodes per rank
  auto at = [&](int r) -> size_t& {
    if ((size_t)r >= width.size()) width.resize(r + 1);
    return width[r];
  };
  for (size_t i = 0; i < g.nodes.size(); i++) at(rank[i])++;
  for (const LEdge& e : g.edges) {
    int lo = std::min(rank[e.src], rank[e.dst]), hi = std::max(rank[e.src], rank[e.dst]);
    work += (size_t)std::max(0, hi - lo - 1);
    for (int r = lo + 1; r < hi; r++) at(r)++;
  }
  // and mincross, whose passes grow with the square of a rank's width: a frame of 829 nodes over 7 ranks, one of
  // them 498 wide, has few virtual nodes but took 350 ms (a 466-node JIT column of 133 ranks at most 65 wide: 480 ms)
  for (size_t w : width) work += w * w / 64;
  return work;
}

std::string dot_tuning(size_t work) {
  // measured on UOp-shaped graphs (gui/tests/bench_layout): dot's cost is its position phase, network simplex on the
  // graph plus one virtual node per rank an edge crosses; cap its iterations (nslimit/nslimit1 are multiples of the node
  // count). Beyond kMaxDotWork even capped runs take seconds, and spline routing after capped phases thrashes
  // (1000 nodes: 3.3 s with splines, 0.6 s without), as the Graphviz forum warns: the layered layout is used there.
  if (work <= 3000) return "nslimit=8 nslimit1=8 splines=spline";
  if (work <= kMaxDotWork) return "nslimit=2 nslimit1=2 mclimit=0.5 splines=spline";
  return "";
}

Layout layout_dot(const LayoutGraph& lg, const DotOptions& opt) {
  std::lock_guard<std::mutex> lock(g_gv_mutex);
  auto t0 = std::chrono::steady_clock::now();
  g_gv_errors.clear();
  GVC_t* ctx = gvc();
  Str gname("g");
  Agraph_t* g = agopen(gname, Agdirected, nullptr);
  if (!g) throw std::runtime_error("Graphviz: cannot create a graph");
  decl(g, AGRAPH, "rankdir", "BT");
  decl(g, AGRAPH, "nodesep", num(opt.nodesep));
  decl(g, AGRAPH, "ranksep", num(opt.ranksep));
  std::string tuning = dot_tuning(dot_work(lg));
  if (tuning.empty()) tuning = "nslimit=0.2 nslimit1=0.2 mclimit=0.2 searchsize=20 splines=false";  // asked anyway
  for (size_t p = 0; p < tuning.size();) {
    size_t e = tuning.find(' ', p);
    std::string kv = tuning.substr(p, e == std::string::npos ? std::string::npos : e - p);
    size_t eq = kv.find('=');
    decl(g, AGRAPH, kv.substr(0, eq), kv.substr(eq + 1));
    p = e == std::string::npos ? tuning.size() : e + 1;
  }
  decl(g, AGNODE, "shape", "box");
  decl(g, AGNODE, "fixedsize", "true");
  decl(g, AGNODE, "label", "");
  Agsym_t* sw = decl(g, AGNODE, "width", "0.75");
  Agsym_t* sh = decl(g, AGNODE, "height", "0.5");
  decl(g, AGEDGE, "arrowsize", "0.6");

  std::vector<Agnode_t*> nodes(lg.nodes.size());
  for (size_t i = 0; i < lg.nodes.size(); i++) {
    Str name("n" + std::to_string(i));
    nodes[i] = agnode(g, name, 1);
    set(nodes[i], sw, num(lg.nodes[i].w / 72.0));
    set(nodes[i], sh, num(lg.nodes[i].h / 72.0));
  }
  // edges in port order, so dot's initial order puts source 0 left of source 1
  std::vector<size_t> order(lg.edges.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return lg.edges[a].dst != lg.edges[b].dst ? lg.edges[a].dst < lg.edges[b].dst : lg.edges[a].port < lg.edges[b].port;
  });
  std::vector<Agedge_t*> edges(lg.edges.size());
  for (size_t i : order) {
    Str name("e" + std::to_string(i));
    edges[i] = agedge(g, nodes[lg.edges[i].src], nodes[lg.edges[i].dst], name, 1);
  }

  if (gvLayout(ctx, g, "dot") != 0) {
    agclose(g);
    std::string err = g_gv_errors.empty() ? std::string("layout failed") : g_gv_errors;
    throw std::runtime_error("Graphviz dot: " + err +
                             " (is the plugin config missing? run `dot -c` as root, environment.md P7)");
  }
  Layout L;
  L.engine = "dot";
  boxf bb = GD_bb(g);
  auto flip = [&](pointf p) { return Pt{p.x - bb.LL.x, bb.UR.y - p.y}; };
  L.width = bb.UR.x - bb.LL.x, L.height = bb.UR.y - bb.LL.y;
  L.pos.resize(lg.nodes.size());
  for (size_t i = 0; i < nodes.size(); i++) L.pos[i] = flip(ND_coord(nodes[i]));
  L.edges.resize(lg.edges.size());
  for (size_t i = 0; i < edges.size(); i++) {
    EdgePath& p = L.edges[i];
    splines* spl = edges[i] ? ED_spl(edges[i]) : nullptr;
    if (!spl || spl->size < 1 || spl->list[0].size < 2) {
      const LEdge& e = lg.edges[i];
      p = simple_edge(L.pos[e.src], lg.nodes[e.src].w, lg.nodes[e.src].h, L.pos[e.dst], lg.nodes[e.dst].w,
                      lg.nodes[e.dst].h, 0, 1);
      continue;
    }
    const bezier& bz = spl->list[0];
    p.bezier = true;
    if (bz.sflag) {  // arrow at the tail: start the path at its tip
      Pt a = flip(bz.sp), b = flip(bz.list[0]);
      p.pts.push_back(a), p.pts.push_back(a), p.pts.push_back(b);
    }
    for (int k = 0; k < bz.size; k++) p.pts.push_back(flip(bz.list[k]));
    if (bz.eflag) {  // arrow at the head: a straight segment to its tip
      Pt a = p.pts.back(), b = flip(bz.ep);
      p.pts.push_back(a), p.pts.push_back(b), p.pts.push_back(b);
    }
    if ((p.pts.size() - 1) % 3 != 0) p.bezier = false;
  }
  gvFreeLayout(ctx, g);
  agclose(g);
  L.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return L;
}

}  // namespace tv
