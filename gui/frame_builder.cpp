#include "gui/frame_builder.h"

#include <algorithm>
#include <sstream>
#include <unordered_set>

#include "gui/expr_text.h"
#include "gui/op_style.h"

namespace tv {

using namespace tg::viz;

LayoutGraph FrameGraph::layout_graph() const {
  LayoutGraph g;
  g.nodes.reserve(nodes.size());
  for (const GNode& n : nodes) g.nodes.push_back({n.key, n.w, n.h});
  g.edges.reserve(edges.size());
  for (const GEdge& e : edges) g.edges.push_back({e.src, e.dst, e.port});
  return g;
}

namespace {
constexpr size_t kWrap = 56, kMaxArgLines = 4, kMaxFolded = 8;

std::vector<std::string> split_label(const std::string& label) {
  std::vector<std::string> out;
  std::istringstream in(label);
  size_t arg_lines = 0;
  for (std::string l; std::getline(in, l);) {
    if (out.empty() || l.size() <= kWrap) {
      out.push_back(l);
      continue;
    }
    for (size_t p = 0; p < l.size() && arg_lines < kMaxArgLines; p += kWrap, arg_lines++)
      out.push_back(arg_lines + 1 == kMaxArgLines && p + kWrap < l.size() ? l.substr(p, kWrap - 1) + "…"
                                                                          : l.substr(p, kWrap));
  }
  return out;
}

void size_node(GNode& n) {
  QSizeF s = label_size(n.lines);
  n.w = s.width(), n.h = s.height();
}
}  // namespace

FrameGraphPtr build_frame(TraceSession::Frames& fr, int64_t step, size_t k, const FrameOptions& opt) {
  Trace& t = fr.trace;
  StepReplay& r = fr.replay(step);
  auto fg = std::make_shared<FrameGraph>();
  fg->step = step;
  fg->frame = k;
  fg->num_frames = r.num_frames();
  if (k >= r.num_frames())
    throw TraceError("step " + std::to_string(step) + " has " + std::to_string(r.num_frames() - 1) +
                     " matches: there is no match " + std::to_string(k));
  std::vector<int64_t> order = r.nodes(k);
  fg->root = r.root(k);
  fg->n_uops = order.size();

  std::unordered_map<int64_t, std::vector<int64_t>> users;  // unique users, in order
  for (int64_t n : order) {
    const Node& node = t.node(n);
    for (int64_t s : node.src) {
      auto& u = users[s];
      if (u.empty() || u.back() != n) u.push_back(n);
    }
  }

  std::unordered_set<int64_t> added, changed_new;
  if (k > 0) {
    FrameDelta d = r.delta(k);
    fg->match = r.matches()[k - 1];
    added.insert(d.added.begin(), d.added.end());
    for (auto& [o, nw] : d.changed) changed_new.insert(nw);
    fg->n_added = d.added.size(), fg->n_removed = d.removed.size(), fg->n_changed = d.changed.size();
    fg->added = d.added, fg->removed = d.removed, fg->changed = d.changed;
  }
  fg->error = r.error();

  // which nodes are drawn, and how
  std::unordered_map<int64_t, char> fold, split;
  for (int64_t n : order) {
    const Node& node = t.node(n);
    bool f = opt.fold_consts && node.op_name == "CONST" && n != fg->root;
    fold[n] = f;
  }
  for (int64_t n : order) {
    if (fold[n] || n == fg->root || !opt.split_leaves) continue;
    const Node& node = t.node(n);
    bool leaf = std::all_of(node.src.begin(), node.src.end(), [&](int64_t s) { return fold[s]; });
    split[n] = leaf && users[n].size() >= 3;
  }

  // the matched subgraph: the replacement and what it brought in with it
  std::unordered_set<int64_t> box;
  if (fg->match && !fg->match->is_error) {
    std::vector<int64_t> st{fg->match->after};
    while (!st.empty()) {
      int64_t n = st.back();
      st.pop_back();
      if (!box.insert(n).second) continue;
      for (int64_t s : t.node(n).src)
        if (added.count(s)) st.push_back(s);
    }
  }
  // focus: what lies within focus_hops edges of the match (up and down)
  std::unordered_map<int64_t, int> keep;  // node -> distance; empty: everything
  if (opt.focus_hops > 0) {
    // from the replacement and what it brought in (its rebuilt users come within reach anyway)
    std::vector<int64_t> seeds(box.begin(), box.end());
    if (k == 0 && !r.matches().empty()) seeds.push_back(r.matches()[0].before);
    std::unordered_set<int64_t> present(order.begin(), order.end());
    std::vector<int64_t> frontier;
    for (int64_t n : seeds)
      if (present.count(n) && keep.emplace(n, 0).second) frontier.push_back(n);
    for (int d = 1; d <= opt.focus_hops && !frontier.empty(); d++) {
      std::vector<int64_t> next;
      auto visit = [&](int64_t m) {
        if (keep.emplace(m, d).second) next.push_back(m);
      };
      for (int64_t n : frontier) {
        for (int64_t s : t.node(n).src) visit(s);
        if (auto it = users.find(n); it != users.end())
          for (int64_t u : it->second) visit(u);
      }
      frontier = std::move(next);
    }
  }
  auto shown = [&](int64_t n) { return keep.empty() || keep.count(n); };

  auto make_node = [&](int64_t n, NodeKey key) {
    const Node& node = t.node(n);
    GNode g;
    g.key = key;
    g.op = node.op_name;
    g.lines = split_label(t.label(n));
    size_t folded = 0;
    for (size_t i = 0; i < node.src.size(); i++) {
      if (!fold.count(node.src[i]) || !fold[node.src[i]]) continue;
      if (folded == 0) g.folded_from = (int)g.lines.size();
      if (folded++ < kMaxFolded) g.lines.push_back("[" + std::to_string(i) + "] " + t.arg_text(node.src[i]));
    }
    if (folded > kMaxFolded) g.lines.push_back("… " + std::to_string(folded - kMaxFolded) + " more consts");
    g.is_root = n == fg->root;
    if (changed_new.count(n))
      g.mark = Mark::changed;
    else if (added.count(n))
      g.mark = Mark::added;
    size_node(g);
    return g;
  };

  std::unordered_map<NodeKey, int, NodeKeyHash> index;
  for (int64_t n : order) {
    if (fold[n] || !shown(n)) continue;
    if (split.count(n) && split[n]) {
      for (int64_t u : users[n]) {
        if (!shown(u)) continue;
        index[{n, u}] = (int)fg->nodes.size();
        fg->nodes.push_back(make_node(n, {n, u}));
      }
    } else {
      index[{n, 0}] = (int)fg->nodes.size();
      fg->nodes.push_back(make_node(n, {n, 0}));
    }
  }
  for (const GNode& gn : fg->nodes) {
    if (gn.key.via) continue;
    int dst = index[gn.key];
    const Node& node = t.node(gn.key.id);
    for (size_t i = 0; i < node.src.size(); i++) {
      int64_t s = node.src[i];
      if (fold[s]) continue;
      NodeKey sk{s, split.count(s) && split[s] ? gn.key.id : 0};
      auto it = index.find(sk);
      if (it == index.end()) continue;
      fg->edges.push_back({it->second, dst, (int)i, 0, 1});
    }
  }
  // focus: the boundary says how much is hidden beyond it
  if (!keep.empty()) {
    for (GNode& g : fg->nodes) {
      if (g.key.via) continue;
      size_t hidden = 0;
      for (int64_t s : t.node(g.key.id).src) hidden += !fold[s] && !shown(s);
      if (auto it = users.find(g.key.id); it != users.end())
        for (int64_t u : it->second) hidden += !shown(u);
      if (hidden) {
        g.lines.push_back("⋯ " + std::to_string(hidden) + " hidden");
        size_node(g);
      }
    }
  }
  // port slots: order of a consumer's drawn in-edges
  {
    std::unordered_map<int, std::vector<size_t>> in;
    for (size_t e = 0; e < fg->edges.size(); e++) in[fg->edges[e].dst].push_back(e);
    for (auto& [dst, es] : in) {
      std::sort(es.begin(), es.end(), [&](size_t a, size_t b) { return fg->edges[a].port < fg->edges[b].port; });
      for (size_t i = 0; i < es.size(); i++) fg->edges[es[i]].slot = (int)i, fg->edges[es[i]].nslots = (int)es.size();
    }
  }
  for (GNode& g : fg->nodes)
    if (box.count(g.key.id)) g.in_match = true;
  // ghosts of what the match removed (folded consts have no place of their own)
  for (int64_t n : fg->removed) {
    const Node& node = t.node(n);
    if (opt.fold_consts && node.op_name == "CONST") continue;
    GNode g = make_node(n, {n, 0});
    g.mark = Mark::none;
    fg->ghosts.push_back(std::move(g));
  }

  // side-panel text for every node of the frame and the removed ones
  ExprPrinter ep(t);
  auto add_info = [&](int64_t n) {
    NodeInfo inf;
    inf.label = t.label(n);
    inf.expr = ep.expr(n);
    inf.src = t.node(n).src;
    if (auto it = users.find(n); it != users.end()) inf.users = it->second;
    fg->info.emplace(n, std::move(inf));
  };
  for (int64_t n : order) add_info(n);
  for (int64_t n : fg->removed) add_info(n);

  if (fg->match) {
    const MatchRow& m = *fg->match;
    if (const RuleRow* rr = fr.session.rule(m.rule)) fg->rule = *rr;
    auto text = [&](int64_t n) { return t.label(n) + "\n" + ep.listing(n); };
    fg->before_text = text(m.before);
    fg->after_text = m.is_error ? "REWRITE_ERROR\n" + m.error : text(m.after);
  }
  return fg;
}

std::string step_graph_text(TraceSession::Frames& fr, int64_t step) {
  Trace& t = fr.trace;
  const StepRow& s = t.step(step);
  auto dump = [&](int64_t root) {
    // sources before users, iteratively
    std::vector<int64_t> order;
    std::unordered_map<int64_t, size_t> num;
    std::vector<std::pair<int64_t, bool>> st{{root, false}};
    std::unordered_set<int64_t> seen;
    while (!st.empty()) {
      auto [n, done] = st.back();
      st.pop_back();
      if (done) {
        num[n] = order.size();
        order.push_back(n);
        continue;
      }
      if (!seen.insert(n).second) continue;
      st.push_back({n, true});
      const Node& node = t.node(n);
      for (size_t i = node.src.size(); i-- > 0;)
        if (!seen.count(node.src[i])) st.push_back({node.src[i], false});
    }
    std::string out;
    for (int64_t n : order) {
      std::string l = t.label(n);
      std::replace(l.begin(), l.end(), '\n', ' ');
      char head[48];
      std::snprintf(head, sizeof head, "%5zu  ", num[n]);
      out += head + l;
      const Node& node = t.node(n);
      if (!node.src.empty()) {
        out += "  <- ";
        for (size_t i = 0; i < node.src.size(); i++) out += (i ? ", " : "") + std::to_string(num[node.src[i]]);
      }
      out += "\n";
    }
    return out;
  };
  std::string out = "# step " + std::to_string(s.id) + ": " + s.name + "  (" + s.file + ":" + std::to_string(s.line) +
                    ")\n# the step's input and output graph, one node per line, sources first\n\n## input (root " +
                    std::to_string(s.input_root) + ")\n";
  out += dump(s.input_root);
  if (s.output_root)
    out += "\n## output (root " + std::to_string(s.output_root) + ")\n" + dump(s.output_root);
  else
    out += "\n## output: the step did not finish (the recording stopped inside it)\n";
  return out;
}

}  // namespace tv
