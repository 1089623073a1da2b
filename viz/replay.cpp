#include "viz/replay.h"

#include <algorithm>
#include <unordered_set>

namespace tg::viz {

namespace {
constexpr int OP_FUNCTION = 6, OP_CALL = 7, OP_PROGRAM = 8, OP_LINEAR = 9, OP_SINK = 12, OP_COPY = 68,
              OP_CUSTOM_FUNCTION = 71;
}

StepReplay::StepReplay(Trace& trace, int64_t step) : t_(trace), step_(trace.step(step)) {
  matches_ = t_.matches(step);
  // load every node the replay can meet, so content lookups find recorded nodes (an id that is not a uop of the
  // trace is an error naming the row it came from)
  std::string key = std::to_string(step);
  t_.node_ref(step_.input_root, "steps", key, "input_root");
  if (step_.output_root) t_.node_ref(step_.output_root, "steps", key, "output_root");
  for (const MatchRow& m : matches_) {
    std::string mk = "step " + key + ", ordinal " + std::to_string(m.ordinal);
    const char* table = m.is_error ? "rule_errors" : "matches";
    t_.node_ref(m.before, table, mk, "before"), t_.node_ref(m.after, table, mk, m.is_error ? "error_uop" : "after");
  }
  for (int64_t n : t_.step_notes(step)) t_.node_ref(n, "step_uops", "step " + key, "uop");
  roots_.push_back(step_.input_root);
}

std::string StepReplay::where() const { return "trace '" + t_.path() + "': replay of step " + std::to_string(step_.id); }

int64_t StepReplay::rebuild(int64_t nid, const std::vector<int64_t>& new_src) {
  const Node n = t_.node(nid);  // copy: interning may grow the node table
  bool dtype_changed = false;
  for (size_t i = 0; i < n.src.size() && i < new_src.size(); i++)
    dtype_changed |= t_.node(n.src[i]).dtype != t_.node(new_src[i]).dtype;
  if (dtype_changed)
    if (int64_t found = t_.find_any_dtype(n.op, n.arg, n.tag, new_src)) return found;
  return t_.intern_node(n.op, n.dtype, n.arg, n.tag, new_src);
}

static bool is_opaque_call(Trace& t, const Node& n) {
  if (n.op == OP_FUNCTION) return true;
  if (n.op != OP_CALL || n.src.empty()) return false;
  int b = t.node(n.src[0]).op;
  return b == OP_SINK || b == OP_PROGRAM || b == OP_LINEAR || b == OP_COPY || b == OP_CUSTOM_FUNCTION;
}

// graph_rewrite(root, _substitute, map, bottom_up=True, walk=walk) over trace nodes
int64_t StepReplay::substitute(int64_t root, bool walk) {
  std::unordered_map<int64_t, int64_t> replace;
  auto lookup = [&](int64_t n) -> int64_t {
    auto it = map_.find(n);
    return it == map_.end() ? 0 : it->second;
  };
  if (walk) {
    std::vector<std::pair<int64_t, bool>> stack{{root, false}};
    while (!stack.empty()) {
      auto [n, processed] = stack.back();
      stack.pop_back();
      if (replace.count(n)) continue;
      if (!processed) {
        if (int64_t r = lookup(n)) {
          replace[n] = r;
          continue;
        }
        stack.push_back({n, true});
        const Node node = t_.node(n);
        if (!step_.enter_calls && is_opaque_call(t_, node)) replace[node.src[0]] = node.src[0];
        for (size_t i = node.src.size(); i > 0; i--)
          if (!replace.count(node.src[i - 1])) stack.push_back({node.src[i - 1], false});
      } else {
        const Node node = t_.node(n);
        std::vector<int64_t> ns;
        bool changed = false;
        for (int64_t s : node.src) {
          auto it = replace.find(s);
          ns.push_back(it == replace.end() ? s : it->second);
          changed |= ns.back() != s;
        }
        replace[n] = changed ? rebuild(n, ns) : n;
      }
    }
    auto it = replace.find(root);
    return it == replace.end() ? root : it->second;
  }
  struct E {
    int64_t n;
    int stage;
    int64_t nn;
  };
  std::vector<E> stack{{root, 0, root}};
  std::unordered_set<int64_t> on_stack{root};
  std::unordered_map<int64_t, std::vector<E>> waitlist;
  auto release = [&](int64_t n) {
    auto it = waitlist.find(n);
    if (it == waitlist.end()) return;
    for (E& e : it->second) stack.push_back(e);
    waitlist.erase(it);
  };
  // a replacement map read from a file could make the rewrite grow without end: a bottom-up rewrite visits each node
  // of the graph a few times per src, so a budget of many times the nodes known (loaded and built) is never reached
  // by a real step
  size_t guard = 0, budget = 64 * (t_.node_count() + matches_.size()) + 1'000'000;
  while (!stack.empty()) {
    if (++guard > budget) throw TraceError(where() + " does not terminate (its replacements keep growing the graph)");
    E e = stack.back();
    stack.pop_back();
    if (replace.count(e.n)) continue;
    if (e.stage == 0) {
      int64_t test = e.n, nn = e.n;
      std::unordered_set<int64_t> seen;
      while (test) {
        if (!seen.insert(test).second) throw TraceError(where() + ": its replacements form a cycle");
        nn = test;
        test = lookup(test);
      }
      stack.push_back({e.n, 1, nn});
      const Node node = t_.node(nn);
      if (!step_.enter_calls && is_opaque_call(t_, node)) replace[node.src[0]] = node.src[0];
      for (size_t i = node.src.size(); i > 0; i--) {
        int64_t x = node.src[i - 1];
        if (on_stack.insert(x).second) stack.push_back({x, 0, x});
      }
    } else if (e.stage == 1) {
      const Node node = t_.node(e.nn);
      std::vector<int64_t> ns;
      bool waiting = false;
      for (int64_t x : node.src) {
        auto it = replace.find(x);
        if (it == replace.end()) {
          waitlist[x].push_back(e);
          waiting = true;
          break;
        }
        ns.push_back(it->second);
      }
      if (waiting) continue;
      if (ns == node.src) {
        replace[e.n] = e.nn;
        release(e.n);
        continue;
      }
      int64_t rb = rebuild(e.nn, ns);
      stack.push_back({e.n, 2, rb});
      stack.push_back({rb, 0, rb});
    } else {
      auto it = replace.find(e.nn);
      if (it == replace.end()) waitlist[e.nn].push_back(e);
      else {
        replace[e.n] = it->second;
        release(e.n);
      }
    }
  }
  auto it = replace.find(root);
  if (it == replace.end()) throw TraceError(where() + " did not reach the root");
  return it->second;
}

int64_t StepReplay::root(size_t k) {
  if (k >= num_frames())
    throw TraceError(where() + ": the step has frames 0.." + std::to_string(num_frames() - 1) + ", not " + std::to_string(k));
  while (roots_.size() <= k) {
    const MatchRow& m = matches_[roots_.size() - 1];
    repl_.push_back({m.before, m.after});
    map_[m.before] = m.after;
    int64_t prev = roots_.back();
    int64_t next;
    if (m.is_error || !error_.empty()) {
      if (error_.empty()) error_ = t_.str(m.error);
      next = prev;  // a rule raised: the step stopped here
    } else {
      try {
        next = substitute(step_.bottom_up || step_.walk ? step_.input_root : prev, step_.walk);
      } catch (const TraceError& e) {
        error_ = e.what();
        damage_ = true;
        next = prev;
      }
    }
    roots_.push_back(next);
  }
  return roots_[k];
}

std::vector<int64_t> StepReplay::nodes(size_t k) {
  int64_t r = root(k);
  std::vector<int64_t> out;
  std::unordered_set<int64_t> seen;
  std::vector<std::pair<int64_t, bool>> st{{r, false}};
  while (!st.empty()) {
    auto [n, visited] = st.back();
    st.pop_back();
    if (seen.count(n)) continue;
    if (visited) {
      seen.insert(n);
      out.push_back(n);
      continue;
    }
    st.push_back({n, true});
    const Node& node = t_.node(n);
    for (size_t i = node.src.size(); i > 0; i--) st.push_back({node.src[i - 1], false});
  }
  return out;
}

FrameDelta StepReplay::delta(size_t k) {
  if (k == 0 || k >= num_frames()) throw TraceError(where() + ": no delta for frame " + std::to_string(k));
  FrameDelta d;
  d.before = matches_[k - 1].before;
  d.after = matches_[k - 1].after;
  auto a = nodes(k - 1), b = nodes(k);
  std::unordered_set<int64_t> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  for (int64_t x : b)
    if (!sa.count(x)) d.added.push_back(x);
  for (int64_t x : a)
    if (!sb.count(x)) d.removed.push_back(x);
  // changed: a removed node whose users were rebuilt maps to the added node in the same position
  int64_t ra = root(k - 1), rb = root(k);
  std::vector<std::pair<int64_t, int64_t>> st{{ra, rb}};
  std::unordered_set<int64_t> done;
  while (!st.empty()) {
    auto [x, y] = st.back();
    st.pop_back();
    if (x == y || !done.insert(x).second) continue;
    if (sb.count(x)) continue;  // still present: not replaced at this position
    d.changed.push_back({x, y});
    const Node nx = t_.node(x), ny = t_.node(y);
    if (nx.op == ny.op && nx.src.size() == ny.src.size())
      for (size_t i = 0; i < nx.src.size(); i++) st.push_back({nx.src[i], ny.src[i]});
  }
  return d;
}

bool StepReplay::reproduces_output() {
  if (!step_.output_root) return false;
  return root(num_frames() - 1) == step_.output_root;
}

}  // namespace tg::viz
