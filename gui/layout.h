// Graph layout for tinyviz, on plain data (no Qt, no Graphviz in this header).
//  - layout_dot: Graphviz `dot` in process (libgvc), tuned for large graphs; serialised by one mutex (cgraph is not
//    thread-safe). Call it from a worker thread.
//  - layout_layered: a small layered layout (longest-path ranks, barycenter ordering, median x), linear-ish time; the
//    fallback beyond the node limit or the time budget.
//  - layout_incremental: keeps the positions of nodes a previous frame's layout already placed and fits new nodes in
//    around them, so untouched nodes stay put while stepping through rewrites.
// Coordinates are scene pixels, y pointing down. Sources are drawn below their users (Graphviz rankdir=BT).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tv {

struct Pt {
  double x = 0, y = 0;
};

// a visible node: the UOp id, plus the consumer it is drawn for when a shared leaf is drawn once per use (via != 0)
struct NodeKey {
  int64_t id = 0, via = 0;
  bool operator==(const NodeKey&) const = default;
};
struct NodeKeyHash {
  size_t operator()(const NodeKey& k) const { return std::hash<int64_t>()(k.id * 1000003 ^ k.via); }
};

struct LNode {
  NodeKey key;
  double w = 0, h = 0;
};
struct LEdge {
  int src = 0, dst = 0;  // indices into nodes: src feeds dst
  int port = 0;          // position of src in dst's sources
};
struct LayoutGraph {
  std::vector<LNode> nodes;
  std::vector<LEdge> edges;
};

struct EdgePath {
  std::vector<Pt> pts;  // bezier: 1+3k control points; otherwise a polyline
  bool bezier = false;
};

struct Layout {
  std::vector<Pt> pos;  // node centres, same order as LayoutGraph::nodes
  std::vector<EdgePath> edges;
  double width = 0, height = 0;
  std::string engine;  // "dot", "layered", "incremental"
  double ms = 0;
  double kept = 0;  // incremental: fraction of nodes that kept a previous position
};

struct DotOptions {
  double nodesep = 0.25, ranksep = 0.35;  // inches
};

// Graphviz dot. Throws std::runtime_error when Graphviz fails (no dot plugin, bad graph).
Layout layout_dot(const LayoutGraph& g, const DotOptions& opt = {});
// What dot costs is driven by its position phase, network simplex on the graph plus one virtual node per rank an
// edge crosses, and by mincross on wide ranks, not by the node count. dot_work estimates that size (nodes + virtual
// nodes + the squares of the ranks' widths / 64);
// dot_tuning is the tuning layout_dot applies for it, empty when dot is not worth trying (use layout_layered).
size_t dot_work(const LayoutGraph& g);
std::string dot_tuning(size_t work);
constexpr size_t kMaxDotWork = 8000;  // ~0.3 s; beyond, seconds (1000 synthetic nodes, work 9600: 1.9 s)

// ranks: longest path from the leaves, each node then pulled up under its lowest user (rank 0 at the bottom)
std::vector<int> layer_ranks(const LayoutGraph& g);
// the nodes in topological order, sources first (Kahn); the nodes left on a cycle go last, by index. srcs[v] and
// users[v] are node v's source and user nodes
std::vector<int> sources_first(const std::vector<std::vector<int>>& srcs, const std::vector<std::vector<int>>& users);

Layout layout_layered(const LayoutGraph& g);

// base: a previous frame's graph and its layout. inherit: node id in g -> the id whose place it takes (a rebuilt
// node takes the place of the node it replaced). obstacles: boxes (centre, w, h) new nodes must not cover.
// Returns an empty engine string when too little of g could keep a position (then lay out from scratch).
struct Box {
  Pt c;
  double w = 0, h = 0;
};
Layout layout_incremental(const LayoutGraph& g, const LayoutGraph& base_graph, const Layout& base,
                          const std::unordered_map<int64_t, int64_t>& inherit, const std::vector<Box>& obstacles,
                          double min_kept = 0.5);

// straight or gently curved edge from the top of src to the bottom of dst (used by the layered and incremental
// layouts); the port spreads several sources of one node along its bottom side
EdgePath simple_edge(Pt src, double src_w, double src_h, Pt dst, double dst_w, double dst_h, int port, int n_ports);

}  // namespace tv
