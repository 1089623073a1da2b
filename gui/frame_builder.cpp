#include "gui/frame_builder.h"

#include "gui/label_facts.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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

size_t FrameGraph::bytes() const {
  size_t b = sizeof(FrameGraph) + edges.size() * sizeof(GEdge) + before_text.size() + after_text.size();
  for (const auto* v : {&nodes, &ghosts})
    for (const GNode& n : *v) {
      b += sizeof(GNode) + n.op.capacity();
      for (const auto& l : n.lines) b += sizeof(std::string) + (l.size() > 15 ? l.capacity() : 0);
    }
  for (const auto& [id, inf] : info) b += 48 + sizeof(NodeInfo) + 8 * (inf.src.capacity() + inf.users.capacity());
  return b + 8 * (added.size() + removed.size() + 2 * changed.size());
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

// the CALL/FUNCTION body (src 0) and a PROGRAM's sources 0 and 1: what hiding kernel bodies hides
size_t body_ports(const Node& node) {
  if (node.op_name == "CALL" || node.op_name == "FUNCTION") return std::min<size_t>(1, node.src.size());
  if (node.op_name == "PROGRAM") return std::min<size_t>(2, node.src.size());
  return 0;
}

// One frame of a step, built in named steps (run() calls them in order); the members are what the steps decide
// and hand on.
class FrameBuild {
 public:
  FrameBuild(TraceSession::Frames& frames, int64_t step, size_t match, const FrameOptions& options)
      : fr(frames), t(frames.trace), r(frames.replay(step)), opt(options), step_(step), k(match) {}
  FrameGraphPtr run() {
    start();
    collect_users();
    read_delta();
    choose_folds();
    mark_match();
    apply_display_filters();
    focus_on_match();
    collapse_subtrees();
    find_implied_edges();
    make_nodes();
    make_edges();
    finish_nodes();
    fill_side_panel();
    return fg;
  }

 private:
  void start();
  void collect_users();
  void read_delta();
  void choose_folds();
  void mark_match();
  void apply_display_filters();
  void focus_on_match();
  void collapse_subtrees();
  void find_implied_edges();
  void make_nodes();
  void make_edges();
  void finish_nodes();
  void fill_side_panel();
  bool in_focus(int64_t n) const { return keep.empty() || keep.count(n); }
  bool shown(int64_t n) const { return in_focus(n) && !hidden.count(n); }
  std::vector<int64_t> drawn_srcs(int64_t n);
  GNode make_node(int64_t n, NodeKey key);

  TraceSession::Frames& fr;
  Trace& t;
  StepReplay& r;
  const FrameOptions& opt;
  int64_t step_;
  size_t k;
  std::shared_ptr<FrameGraph> fg;
  std::vector<int64_t> order;                                 // the frame's nodes, sources first
  std::unordered_map<int64_t, std::vector<int64_t>> users;    // unique users, in order
  std::unordered_set<int64_t> added, changed_new;             // what the match added, and the new side of a change
  std::unordered_map<int64_t, char> fold, split;              // folded into users' labels; drawn once per user
  std::unordered_set<int64_t> box;                            // the match's replacement and what it brought in
  std::unordered_set<int64_t> gone, bodies_hidden;            // filtered out; CALLs whose body is hidden
  std::unordered_map<int64_t, int> keep;                      // focus: node -> distance; empty: everything
  std::unordered_map<int64_t, size_t> pos;                    // node -> its index in order
  std::unordered_set<int64_t> open;                           // what collapsing keeps in sight
  std::unordered_set<int64_t> hidden;                         // filtered or inside a collapsed subtree
  std::unordered_map<int64_t, std::vector<int64_t>> hides;    // collapsed node -> what it hides
  size_t drawn = 0;                                           // the nodes drawn after collapsing
  std::unordered_map<int64_t, std::unordered_set<int64_t>> implied;  // node -> its sources whose edge is left out
  std::unordered_map<int64_t, std::vector<int64_t>> column;          // LINEAR -> its drawn sources, in order
  std::unordered_map<NodeKey, int, NodeKeyHash> index;               // drawn node -> its place in fg->nodes
  std::vector<std::pair<int, int>> ph_edges;                         // (placeholder, user)
};

void FrameBuild::start() {
  fg = std::make_shared<FrameGraph>();
  fg->step = step_;
  fg->frame = k;
  fg->num_frames = r.num_frames();
  if (k >= r.num_frames())
    throw TraceError("step " + std::to_string(step_) + " has " + std::to_string(r.num_frames() - 1) +
                     " matches: there is no match " + std::to_string(k));
  order = r.nodes(k);
  fg->root = r.root(k);
  fg->n_uops = order.size();
  fr.frame_size(order.size());
}

void FrameBuild::collect_users() {
  for (int64_t n : order) {
    const Node& node = t.node(n);
    for (int64_t s : node.src) {
      auto& u = users[s];
      if (u.empty() || u.back() != n) u.push_back(n);
    }
  }
}

void FrameBuild::read_delta() {
  if (k > 0) {
    FrameDelta d = r.delta(k);
    fg->match = r.matches()[k - 1];
    added.insert(d.added.begin(), d.added.end());
    for (auto& [o, nw] : d.changed) changed_new.insert(nw);
    fg->n_added = d.added.size(), fg->n_removed = d.removed.size(), fg->n_changed = d.changed.size();
    fg->added = d.added, fg->removed = d.removed, fg->changed = d.changed;
  }
  fg->error = r.error();
  fg->error_is_damage = r.error_is_damage();
}

// which nodes are drawn, and how
void FrameBuild::choose_folds() {
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
}

// the matched subgraph: the replacement and what it brought in with it
void FrameBuild::mark_match() {
  if (fg->match && !fg->match->is_error) {
    std::vector<int64_t> st{fg->match->after};
    while (!st.empty()) {
      int64_t n = st.back();
      st.pop_back();
      if (!box.insert(n).second) continue;
      for (int64_t s : t.node(n).src)
        if (added.count(s)) st.push_back(s);
    }
    // a replacement folded into its users' labels (a constant) has no box of its own: its users carry it
    int64_t after = fg->match->after;
    if (fold.count(after) && fold[after]) {
      fg->folded_result = true;
      for (int64_t u : users[after]) box.insert(u);
    }
  }
}

void FrameBuild::apply_display_filters() {
  // Display filters, as the reference's VIZ has them: a CALL's or FUNCTION's kernel body (src 0) and a PROGRAM's
  // sources 0 and 1 when bodies are hidden, a SINK nothing uses, index-typed nodes; then whatever only the hidden
  // edges reached. The match's replacement and what it brought in always stay, and so does the body of every CALL
  // it lies in (the view opens on the match).
  std::unordered_set<int64_t> holds_match;  // CALLs whose body holds the match
  if (!box.empty()) {
    std::vector<int64_t> st(box.begin(), box.end());
    std::unordered_set<int64_t> seen(box.begin(), box.end());
    while (!st.empty()) {
      int64_t n = st.back();
      st.pop_back();
      auto it = users.find(n);
      if (it == users.end()) continue;
      for (int64_t u : it->second) {
        const Node& un = t.node(u);
        for (size_t i = 0; i < body_ports(un); i++)
          if (un.src[i] == n) holds_match.insert(u);
        if (seen.insert(u).second) st.push_back(u);
      }
    }
  }
  std::unordered_set<int64_t> disconnected;
  for (int64_t n : order) {
    const Node& node = t.node(n);
    if (size_t bp = body_ports(node); bp && !holds_match.count(n)) {
      bool hide = opt.expanded.count(n) ? false : opt.collapsed.count(n) ? true : !opt.show_call_src;
      if (hide) {
        bodies_hidden.insert(n);
        for (size_t i = 0; i < bp; i++) disconnected.insert(node.src[i]);
      }
    }
    if (box.count(n)) continue;
    auto u = users.find(n);
    if (!opt.show_sink && node.op_name == "SINK" && (u == users.end() || u->second.empty())) gone.insert(n);
    if (!opt.show_indexing && t.dtype_name(node.dtype) == "weakint") gone.insert(n);
  }
  if (!disconnected.empty()) {
    auto feeds_a_drawn_user = [&](int64_t n) {
      auto it = users.find(n);
      if (it == users.end()) return false;
      for (int64_t u : it->second) {
        if (gone.count(u)) continue;
        const Node& un = t.node(u);
        for (size_t i = bodies_hidden.count(u) ? body_ports(un) : 0; i < un.src.size(); i++)
          if (un.src[i] == n) return true;
      }
      return false;
    };
    for (auto it = order.rbegin(); it != order.rend(); ++it) {  // users before their sources
      int64_t n = *it;
      if (!disconnected.count(n) || gone.count(n) || box.count(n) || n == fg->root || feeds_a_drawn_user(n)) continue;
      gone.insert(n);
      for (int64_t x : t.node(n).src) disconnected.insert(x);
    }
  }
  for (int64_t n : order)
    if (bodies_hidden.count(n)) fg->bodies_hidden.push_back(n);
  for (int64_t n : gone) fg->n_filtered += !fold[n];
}

void FrameBuild::focus_on_match() {
  // focus: what lies within focus_hops edges of the match (up and down)
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
}

void FrameBuild::collapse_subtrees() {
  // Collapsing. A collapsed node c hides its sources subtree: every node below it, shared or not, except what must
  // stay in sight: the match's replacement and what lies under it, the ends of one path from it up to the root, and
  // the nodes above those. The placeholder feeds c and every drawn user of a hidden node (a shared subtree keeps its
  // other users connected); nothing feeds it, so no cycles.
  for (size_t i = 0; i < order.size(); i++) pos[order[i]] = i;
  int64_t after = fg->match && !fg->match->is_error ? fg->match->after : 0;
  if (after && pos.count(after)) {
    std::unordered_map<int64_t, int64_t> up{{after, 0}};
    std::vector<int64_t> q{after};
    for (size_t i = 0; i < q.size() && !up.count(fg->root); i++)
      if (auto u = users.find(q[i]); u != users.end())
        for (int64_t x : u->second)
          if (up.emplace(x, q[i]).second) q.push_back(x);
    // the path may be a chain of 500 rebuilt nodes: only its ends stay open, its middle may fold
    std::vector<int64_t> chain;  // root first
    for (int64_t n = up.count(fg->root) ? fg->root : after; n; n = up[n]) chain.push_back(n);
    for (size_t i = 0; i < chain.size(); i++)
      if (i < 3 || i + 6 >= chain.size()) open.insert(chain[i]);
    open.insert(after);  // (what lies under it stays drawn too: `below` in subtree())
    // a folded const is drawn in its users' labels, and a widely shared leaf (a CONST True the match produced)
    // would keep everything above it open: neither holds anything open
    for (auto it = open.begin(); it != open.end();)
      it = fold[*it] || (t.node(*it).src.empty() && users[*it].size() > 4) ? open.erase(it) : std::next(it);
  }
  hidden.insert(gone.begin(), gone.end());
  // a big frame's auto-collapse asks for thousands of subtrees: their marks are stamps over the frame's node order
  // (one allocation per frame instead of four hash sets per subtree)
  struct Marks {
    uint32_t seen = 0, in = 0, reach = 0, below = 0;
  };
  std::vector<Marks> mark(order.size());
  uint32_t stamp = 0;
  auto subtree = [&](int64_t c) {
    ++stamp;
    auto at = [&](int64_t n) -> Marks* {
      auto p = pos.find(n);
      return p == pos.end() ? nullptr : &mark[p->second];
    };
    if (Marks* m = at(c)) m->seen = stamp;
    std::vector<int64_t> desc;
    std::vector<int64_t> st(t.node(c).src.begin(), t.node(c).src.end());
    while (!st.empty()) {
      int64_t n = st.back();
      st.pop_back();
      Marks* m = at(n);
      if (!m || m->seen == stamp) continue;
      m->seen = stamp;
      if (hidden.count(n) || hides.count(n)) continue;
      desc.push_back(n);
      for (int64_t s : t.node(n).src) st.push_back(s);
    }
    std::sort(desc.begin(), desc.end(), [&](int64_t a, int64_t b) { return pos[a] < pos[b]; });  // sources first
    for (int64_t n : desc) at(n)->in = stamp;
    for (int64_t n : desc) {  // reaches an open node
      bool r = open.count(n) > 0;
      for (int64_t s : t.node(n).src)
        if (!r)
          if (Marks* m = at(s)) r = m->reach == stamp;
      if (r) at(n)->reach = stamp;
    }
    for (auto it = desc.rbegin(); it != desc.rend(); ++it) {  // lies under the replacement
      bool b = false;
      for (int64_t u : users[*it]) {
        Marks* m = at(u);
        b = b || (((m && m->in == stamp) || u == c) && ((u == after && open.count(u)) || (m && m->below == stamp)));
      }
      if (b) at(*it)->below = stamp;
    }
    std::vector<int64_t> h;
    for (int64_t n : desc) {
      Marks* m = at(n);
      if (m->reach != stamp && m->below != stamp && !opt.expanded.count(n)) h.push_back(n);
    }
    return h;
  };
  auto n_drawn = [&](const std::vector<int64_t>& h) {
    size_t n = 0;
    for (int64_t x : h) n += !fold[x] && in_focus(x);
    return n;
  };
  auto collapse = [&](int64_t c, std::vector<int64_t> h, bool automatic) {
    if (h.empty()) return;
    hidden.insert(h.begin(), h.end());
    hides[c] = std::move(h);
    fg->collapsed.push_back(c);
    if (automatic) fg->auto_collapsed.push_back(c);
  };
  for (auto it = order.rbegin(); it != order.rend(); ++it)  // top-down, so an outer collapse wins
    if (opt.collapsed.count(*it) && !hidden.count(*it) && in_focus(*it) && !body_ports(t.node(*it)))
      collapse(*it, subtree(*it), false);  // (a CALL's toggle is its body's, above)
  // a big graph: collapse top-down the first subtrees of at most half of what is drawn (then of any size), until
  // about auto_collapse_target nodes are left
  for (int64_t n : order) drawn += !fold[n] && in_focus(n) && !hidden.count(n);
  if (opt.auto_collapse && keep.empty() && drawn > opt.auto_collapse_above)
    for (int pass = 0; pass < 2 && drawn > opt.auto_collapse_target; pass++)
      for (auto it = order.rbegin(); it != order.rend() && drawn > opt.auto_collapse_target; ++it) {
        int64_t c = *it;
        if (c == fg->root || fold[c] || hidden.count(c) || hides.count(c) || opt.expanded.count(c) ||
            t.node(c).src.empty())
          continue;
        std::vector<int64_t> h = subtree(c);
        size_t n = n_drawn(h);
        if (n < opt.auto_collapse_min || (pass == 0 && n > drawn / 2)) continue;
        collapse(c, std::move(h), true);
        drawn -= n - 1;
      }
}

// a node's distinct sources drawn as nodes of their own (not folded, not split per user, not a hidden kernel body)
std::vector<int64_t> FrameBuild::drawn_srcs(int64_t n) {
  const Node& node = t.node(n);
  std::vector<int64_t> srcs;
  for (size_t i = bodies_hidden.count(n) ? body_ports(node) : 0; i < node.src.size(); i++) {
    int64_t x = node.src[i];
    if (!fold[x] && shown(x) && !(split.count(x) && split[x]) && std::find(srcs.begin(), srcs.end(), x) == srcs.end())
      srcs.push_back(x);
  }
  return srcs;
}

void FrameBuild::find_implied_edges() {
  // A node with many drawn sources (a schedule's LINEAR over its kernels): an edge to a source that another of its
  // sources reaches says nothing the graph does not show, and drawn, it crosses every rank in between: with a few
  // hundred kernels these edges are bundles across the whole canvas. They are left out, and the node says how many.
  if (opt.hide_implied_edges) {
    std::unordered_map<int64_t, uint32_t> seen;  // node -> the walk that reached it last
    uint32_t walk = 0;
    for (int64_t n : order) {
      if (fold[n] || !shown(n)) continue;
      std::vector<int64_t> srcs = drawn_srcs(n);
      if (srcs.size() < opt.wide_srcs) continue;
      std::unordered_set<int64_t> is_src(srcs.begin(), srcs.end());
      std::unordered_set<int64_t>& out = implied[n];
      for (int64_t from : srcs) {  // what lies under `from` (through drawn edges; kernel bodies are not walked)
        ++walk;
        std::vector<int64_t> st{from};
        while (!st.empty()) {
          int64_t x = st.back();
          st.pop_back();
          const Node& xn = t.node(x);
          for (size_t i = bodies_hidden.count(x) ? body_ports(xn) : 0; i < xn.src.size(); i++) {
            int64_t y = xn.src[i];
            if (fold[y] || gone.count(y)) continue;
            auto [it, fresh] = seen.emplace(y, walk);
            if (!fresh && it->second == walk) continue;
            it->second = walk;
            if (is_src.count(y)) out.insert(y);
            st.push_back(y);
          }
        }
      }
      if (out.empty()) implied.erase(n);
    }
  }
}

GNode FrameBuild::make_node(int64_t n, NodeKey key) {
  int variant = (opt.fold_consts ? 1 : 0) | (opt.label_facts ? 2 : 0) | (opt.long_facts ? 4 : 0);
  NodeLookPtr look = fr.node_look(n, variant, [&] {
    const Node& node = t.node(n);
    auto l = std::make_shared<NodeLook>();
    l->op = node.op_name;
    l->lines = split_label(t.graph_label(n));
    // the kernel a CALL runs, as the reference's `codegen@` line; a kernel's SINK names its own codegen context
    int64_t ast = (node.op_name == "CALL" || node.op_name == "FUNCTION") && !node.src.empty() ? node.src[0]
                  : node.op_name == "SINK"                                                 ? n
                                                                                           : 0;
    if (ast && t.node(ast).op_name == "PROGRAM" && !t.node(ast).src.empty()) ast = t.node(ast).src[0];  // its SINK
    if (const TraceSession::KernelRef* k = ast ? fr.session.kernel_of(ast) : nullptr) {
      l->ref_context = k->context;
      l->lines.insert(l->lines.begin() + 1,
                      "codegen@" + k->name_ansi + (k->device.empty() ? "" : "  " + k->device));
    }
    size_t folded = 0;
    for (size_t i = 0; i < node.src.size(); i++) {
      if (!fold.count(node.src[i]) || !fold[node.src[i]]) continue;
      if (folded == 0) l->folded_from = (int)l->lines.size();
      if (folded++ < kMaxFolded)
        l->lines.push_back("[" + std::to_string(i) + "] " + t.graph_arg_text(node.src[i]));
    }
    if (folded > kMaxFolded) l->lines.push_back("… " + std::to_string(folded - kMaxFolded) + " more consts");
    if (opt.label_facts) {
      LabelFacts& facts = fr.facts();
      std::vector<std::string> more = facts.lines(n, opt.long_facts);
      if (!more.empty()) l->facts_from = (int)l->lines.size();
      for (std::string& m : more) l->lines.push_back(std::move(m));
      const std::string& a = facts.addrspace(n);
      l->addrspace = a.empty() ? 0 : a[0];
    }
    QSizeF sz = label_size(l->lines);
    l->w = sz.width() + (l->addrspace ? 20 : 0), l->h = sz.height();  // room for the square beside the op
    return l;
  });
  GNode g;
  g.key = key;
  g.op = look->op;
  g.lines = look->lines;
  g.folded_from = look->folded_from;
  g.facts_from = look->facts_from;
  g.addrspace = look->addrspace;
  g.ref_context = look->ref_context;
  g.w = look->w, g.h = look->h;
  g.body_hidden = bodies_hidden.count(n) > 0;
  g.is_root = n == fg->root;
  if (changed_new.count(n))
    g.mark = Mark::changed;
  else if (added.count(n))
    g.mark = Mark::added;
  return g;
}

void FrameBuild::make_nodes() {
  // A LINEAR lists a program's calls in the order they run. With hundreds of them in one row under it, the row is
  // tens of thousands of pixels wide and every edge from a call to a buffer it shares with a call far away crosses
  // it. Drawn as a column (an edge to its first source, then "runs after" edges down the list), the program reads top
  // down and what a call uses stands beside it.
  if (opt.linear_as_column)
    for (int64_t n : order) {
      if (fold[n] || !shown(n) || t.node(n).op_name != "LINEAR") continue;
      std::vector<int64_t> srcs = drawn_srcs(n);
      if (auto imp = implied.find(n); imp != implied.end())
        srcs.erase(std::remove_if(srcs.begin(), srcs.end(), [&](int64_t x) { return imp->second.count(x) > 0; }),
                   srcs.end());
      if (srcs.size() >= opt.wide_srcs) column[n] = std::move(srcs);
    }
  auto add_implied_line = [&](GNode& g) {
    if (auto c = column.find(g.key.id); c != column.end()) {
      g.lines.push_back("↓ " + std::to_string(c->second.size()) + " srcs in order, dashed: runs after");
      size_node(g);
    }
    auto it = implied.find(g.key.id);
    if (it == implied.end()) return;
    g.lines.push_back("⋯ " + std::to_string(it->second.size()) + " srcs reached through others (edges not drawn)");
    size_node(g);
  };
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
      add_implied_line(fg->nodes.back());
    }
  }
  // one placeholder under each collapsed node, counting what it hides. It feeds the collapsed node and every drawn
  // user of what it hides (folded consts aside). A shared subtree (a kernel's index arithmetic) can have users all
  // over the graph: with split_leaves on and three or more users in all, the placeholder is a leaf drawn once per
  // user, as a shared leaf is (key {c, user}), instead of one box with edges across every rank in between (on a
  // training run's biggest kernel, such fans made three quarters of a frame's edge crossings and half of Graphviz's
  // time).
  // not in a frame that collapsing left with more than twice the nodes it aims at: copies there would add nodes (a
  // synthetic 5,000-node graph kept ~3,600 drawn with 110 placeholders and would get 1,400 copies) where the frame
  // is already past reading node by node, and cost its stepping time
  bool split_placeholders = drawn <= 2 * opt.auto_collapse_above;
  for (auto& [c, h] : hides) {
    if (!index.count({c, 0})) continue;
    GNode g;
    g.key = {c, kPlaceholderVia};
    g.op = "COLLAPSED";
    g.hides = h.size();
    g.lines = {"⋯ " + std::to_string(h.size()) + " nodes", "collapsed (X expands)"};
    for (int64_t x : h) {
      if (changed_new.count(x))
        g.mark = Mark::changed;
      else if (added.count(x) && g.mark == Mark::none)
        g.mark = Mark::added;
    }
    size_node(g);
    int owner = index[{c, 0}];
    std::vector<int> to;  // the other drawn users, in the order met
    std::unordered_set<int> seen{owner};
    for (int64_t x : h) {
      if (fold[x]) continue;  // a folded const is drawn in each user's label: no edge says where it is
      for (int64_t u : users[x]) {
        auto it = index.find({u, 0});
        if (it != index.end() && !hidden.count(u) && seen.insert(it->second).second) to.push_back(it->second);
      }
    }
    bool copies = opt.split_leaves && to.size() >= 2 && split_placeholders;
    int at = (int)fg->nodes.size();
    index[g.key] = at;
    ph_edges.push_back({at, owner});
    fg->nodes.push_back(g);
    if (!copies) {
      for (int u : to) ph_edges.push_back({at, u});
      continue;
    }
    GNode shared = g;
    shared.lines[1] = "shared, collapsed (X expands)";  // the same nodes as the placeholder under c
    size_node(shared);
    for (int u : to) {
      GNode copy = shared;
      copy.key = {c, fg->nodes[u].key.id};
      index[copy.key] = (int)fg->nodes.size();
      ph_edges.push_back({(int)fg->nodes.size(), u});
      fg->nodes.push_back(std::move(copy));
    }
  }
}

void FrameBuild::make_edges() {
  for (const GNode& gn : fg->nodes) {
    if (gn.key.via) continue;
    int dst = index[gn.key];
    const Node& node = t.node(gn.key.id);
    auto imp = implied.find(gn.key.id);
    auto col = column.find(gn.key.id);
    for (size_t i = bodies_hidden.count(gn.key.id) ? body_ports(node) : 0; i < node.src.size(); i++) {
      int64_t s = node.src[i];
      if (fold[s] || (imp != implied.end() && imp->second.count(s))) continue;
      if (col != column.end() && s != col->second.front()) continue;  // the chain below stands for it
      NodeKey sk{s, split.count(s) && split[s] ? gn.key.id : 0};
      auto it = index.find(sk);
      if (it == index.end()) continue;
      fg->edges.push_back({it->second, dst, (int)i, 0, 1});
    }
  }
  for (auto& [n, srcs] : column)  // "runs after": from each source to the one before it
    for (size_t i = 1; i < srcs.size(); i++) {
      auto a = index.find({srcs[i], 0}), b = index.find({srcs[i - 1], 0});
      if (a != index.end() && b != index.end()) fg->edges.push_back({a->second, b->second, 1 << 20, 0, 1, true});
    }
  for (auto [ph, u] : ph_edges) fg->edges.push_back({ph, u, 0, 0, 1});
}

void FrameBuild::finish_nodes() {
  // focus: the boundary says how much is hidden beyond it
  if (!keep.empty()) {
    for (GNode& g : fg->nodes) {
      if (g.key.via) continue;
      size_t n_hidden = 0;
      for (int64_t s : t.node(g.key.id).src) n_hidden += !fold[s] && !in_focus(s);
      if (auto it = users.find(g.key.id); it != users.end())
        for (int64_t u : it->second) n_hidden += !in_focus(u);
      if (n_hidden) {
        g.lines.push_back("⋯ " + std::to_string(n_hidden) + " hidden");
        size_node(g);
      }
    }
  }
  // port slots: order of a consumer's drawn in-edges
  {
    std::unordered_map<int, std::vector<size_t>> in;
    for (size_t e = 0; e < fg->edges.size(); e++)
      if (!fg->edges[e].order) in[fg->edges[e].dst].push_back(e);
    for (auto& [dst, es] : in) {
      std::sort(es.begin(), es.end(), [&](size_t a, size_t b) { return fg->edges[a].port < fg->edges[b].port; });
      for (size_t i = 0; i < es.size(); i++) fg->edges[es[i]].slot = (int)i, fg->edges[es[i]].nslots = (int)es.size();
    }
  }
  // a copy drawn for one user (a split leaf, a shared placeholder) is in the box when its user is: the copies beside
  // users elsewhere would stretch the box, and the view that centres on it, across the graph
  for (GNode& g : fg->nodes)
    if (box.count(g.key.id) && (g.key.via == 0 || g.key.via == kPlaceholderVia || box.count(g.key.via)))
      g.in_match = true;
  // the line of a user's label that names the folded result
  if (fg->folded_result)
    for (GNode& g : fg->nodes) {
      if (!g.in_match || g.folded_from < 0 || g.hides) continue;
      const Node& node = t.node(g.key.id);
      int line = g.folded_from;
      for (size_t i = 0; i < node.src.size() && line < (int)g.lines.size(); i++) {
        if (!fold.count(node.src[i]) || !fold[node.src[i]]) continue;
        if (node.src[i] == fg->match->after) {
          g.result_line = line;
          break;
        }
        line++;
      }
    }
  // ghosts of what the match removed (folded consts have no place of their own)
  for (int64_t n : fg->removed) {
    const Node& node = t.node(n);
    if (opt.fold_consts && node.op_name == "CONST") continue;
    GNode g = make_node(n, {n, 0});
    g.mark = Mark::none;
    fg->ghosts.push_back(std::move(g));
  }
}

void FrameBuild::fill_side_panel() {
  // side-panel text for every node of the frame and the removed ones
  ExprPrinter ep(t);
  auto add_info = [&](int64_t n) {
    NodeInfo inf;
    inf.text = fr.node_text(n, [&] {
      auto nt = std::make_shared<NodeText>();
      nt->label = t.label(n);
      nt->expr = ep.expr(n);
      return std::shared_ptr<const NodeText>(std::move(nt));
    });
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
    fg->after_text = m.is_error ? "REWRITE_ERROR\n" + t.str(m.error) : text(m.after);
    ExprPrinter one(t, 200);
    fg->match_line = one.expr(m.before) + "  →  " + (m.is_error ? std::string("REWRITE_ERROR") : one.expr(m.after));
  }
}

}  // namespace

FrameGraphPtr build_frame(TraceSession::Frames& fr, int64_t step, size_t k, const FrameOptions& opt) {
  return FrameBuild(fr, step, k, opt).run();
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
