#include "viz/reader/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <unordered_map>

namespace tg::viz {

namespace {

std::string base_name(const std::string& f) { return f.substr(f.rfind('/') + 1); }

std::string rule_key(Trace& t, int64_t rule) {
  auto r = t.rule(rule);
  return r ? base_name(r->file) + ":" + std::to_string(r->line) : "rule " + std::to_string(rule);
}
std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

// the module a rule lives in: its file's name without the extension, a package's __init__ named by its folder
std::string rule_module(Trace& t, int64_t rule) {
  auto r = t.rule(rule);
  if (!r) return "rule " + std::to_string(rule);
  std::string b = base_name(r->file);
  b = b.substr(0, b.rfind('.'));
  if (b == "__init__" && r->file.find('/') != std::string::npos) b = base_name(r->file.substr(0, r->file.rfind('/')));
  return b;
}

// items keyed by (key, occurrence of that key): the k-th context named X on one side meets the k-th on the other
template <class F>
std::vector<std::string> occurrence_keys(size_t n, F key_of) {
  std::map<std::string, int> seen;
  std::vector<std::string> keys;
  for (size_t i = 0; i < n; i++) {
    std::string k = key_of(i);
    keys.push_back(k + " #" + std::to_string(++seen[k]));
  }
  return keys;
}

// B's items placed into A's order: each aligned item at A's place, what only B has after the aligned item it follows
// in B (or first). keys_a/keys_b: occurrence keys; emit(ia, ib) with -1 for a missing side
template <class Emit>
void merge_order(const std::vector<std::string>& keys_a, const std::vector<std::string>& keys_b, Emit emit) {
  std::map<std::string, size_t> in_a, in_b;
  for (size_t i = 0; i < keys_a.size(); i++) in_a[keys_a[i]] = i;
  for (size_t i = 0; i < keys_b.size(); i++) in_b[keys_b[i]] = i;
  size_t jb = 0;  // B's items before jb are placed
  auto flush_b_only = [&](size_t upto) {
    for (; jb < upto; jb++)
      if (!in_a.count(keys_b[jb])) emit(-1, (long)jb);
  };
  for (size_t i = 0; i < keys_a.size(); i++) {
    auto it = in_b.find(keys_a[i]);
    if (it == in_b.end()) {
      emit((long)i, -1);
      continue;
    }
    if (it->second >= jb) flush_b_only(it->second), jb = it->second + 1;
    emit((long)i, (long)it->second);
  }
  flush_b_only(keys_b.size());
}

}  // namespace

uint64_t NodeShapes::of(int64_t root) {
  if (auto it = memo_.find(root); it != memo_.end()) return it->second;
  std::vector<std::pair<int64_t, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [id, ready] = stack.back();
    stack.pop_back();
    if (memo_.count(id)) continue;
    const Node& n = t_.node(id);
    if (!ready) {
      stack.push_back({id, true});
      for (int64_t s : n.src)
        if (!memo_.count(s)) stack.push_back({s, false});
      continue;
    }
    std::string key = std::to_string(id);
    uint64_t h = std::hash<std::string>()(std::string(n.op_name) + "|" + t_.dtype_name(n.dtype) + "|" +
                                          t_.str_ref(n.arg, "uops", key, "arg") + "|" +
                                          (n.tag ? t_.str_ref(n.tag, "uops", key, "tag") : std::string("-")));
    for (int64_t s : n.src) h = (h ^ memo_.at(s)) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
    memo_[id] = h;
  }
  return memo_.at(root);
}

TraceDiff diff_traces(Trace& a, Trace& b, std::optional<DiffOptions> opt) {
  TraceDiff d;
  // one read transaction per file: the diff reads every step's matches and nodes, tens of thousands of statements,
  // and SQLite otherwise takes and drops each file's lock around every one
  Trace::Batch batch_a(a), batch_b(b);
  // and it hashes nearly every node of both: one scan of each uops table instead of a lookup per node
  for (Trace* t : {&a, &b}) {
    std::vector<int64_t> ids(t->uop_count());
    std::iota(ids.begin(), ids.end(), int64_t{1});
    t->preload(std::move(ids));
  }
  if (!opt) {
    auto producer = [](Trace& t) {
      auto m = t.meta();
      auto it = m.find("producer");
      return it == m.end() ? std::string() : it->second;
    };
    opt = DiffOptions{producer(a) == producer(b)};
  }
  d.compared_rules = opt->compare_rules;
  d.contexts_a = a.contexts().size(), d.contexts_b = b.contexts().size();
  auto ka = occurrence_keys(a.contexts().size(), [&](size_t i) { return a.contexts()[i].name; });
  auto kb = occurrence_keys(b.contexts().size(), [&](size_t i) { return b.contexts()[i].name; });
  NodeShapes sa(a), sb(b);
  auto step_keys = [](Trace& t, const ContextRow& c) {
    return occurrence_keys(c.steps.size(), [&](size_t j) {
      const StepRow& s = t.step(c.steps[j]);
      return s.name + " @" + std::to_string(s.depth);
    });
  };
  auto same_match = [&](const MatchRow& x, const MatchRow& y) {
    return (!opt->compare_rules || rule_key(a, x.rule) == rule_key(b, y.rule)) && x.is_error == y.is_error &&
           sa.of(x.before) == sb.of(y.before) && sa.of(x.after) == sb.of(y.after);
  };
  merge_order(ka, kb, [&](long i, long j) {
    ContextPair cp;
    if (i < 0) {
      d.only_b.push_back(kb[j]);
      cp.b = b.contexts()[j].id;
      for (int64_t s : b.contexts()[j].steps) cp.steps.push_back({0, s, DiffStatus::only_b, 0});
      cp.differing = cp.steps.size();
      d.pairs.push_back(std::move(cp));
      return;
    }
    if (j < 0) {
      d.only_a.push_back(ka[i]);
      cp.a = a.contexts()[i].id;
      for (int64_t s : a.contexts()[i].steps) cp.steps.push_back({s, 0, DiffStatus::only_a, 0});
      cp.differing = cp.steps.size();
      d.pairs.push_back(std::move(cp));
      return;
    }
    d.aligned_contexts++;
    const ContextRow &ca = a.contexts()[i], &cb = b.contexts()[j];
    cp.a = ca.id, cp.b = cb.id;
    merge_order(step_keys(a, ca), step_keys(b, cb), [&](long x, long y) {
      if (x < 0) return cp.steps.push_back({0, cb.steps[y], DiffStatus::only_b, 0});
      if (y < 0) return cp.steps.push_back({ca.steps[x], 0, DiffStatus::only_a, 0});
      d.aligned_steps++;
      const StepRow &sx = a.step(ca.steps[x]), &sy = b.step(cb.steps[y]);
      StepPair sp{sx.id, sy.id, DiffStatus::equal, 0};
      a.check_roots(sx), b.check_roots(sy);
      if (sa.of(sx.input_root) != sb.of(sy.input_root)) {
        sp.status = DiffStatus::input_differs;
      } else {
        auto ma = a.matches(sx.id), mb = b.matches(sy.id);
        a.check_matches(sx.id, ma), b.check_matches(sy.id, mb);
        size_t k = 0;
        while (k < ma.size() && k < mb.size() && same_match(ma[k], mb[k])) k++;
        if (k < ma.size() || k < mb.size()) sp.status = DiffStatus::differs, sp.at = (int64_t)k + 1;
      }
      if (sp.status == DiffStatus::equal) d.equal_steps++;
      cp.steps.push_back(sp);
    });
    for (auto& sp : cp.steps) cp.differing += sp.status != DiffStatus::equal;
    d.pairs.push_back(std::move(cp));
  });
  // the first divergence: the first differing aligned step, then down into the steps nested in it whose input is the
  // same and whose matches differ
  const StepPair* first = nullptr;
  const ContextPair* first_ctx = nullptr;
  for (auto& cp : d.pairs) {
    for (auto& sp : cp.steps)
      if (sp.a && sp.b && sp.status != DiffStatus::equal) {
        first = &sp, first_ctx = &cp;
        break;
      }
    if (first) break;
  }
  if (first) {
    auto nested_in = [&](int64_t step, int64_t ancestor) {
      for (int64_t p = a.step(step).parent, hops = 0; p && hops < 10'000; p = a.step(p).parent, hops++)
        if (p == ancestor) return true;
      return false;
    };
    for (bool deeper = true; deeper;) {  // nested steps sit at any depth below it (steps in between may match nothing)
      deeper = false;
      for (auto& sp : first_ctx->steps)
        if (sp.a && sp.b && sp.status == DiffStatus::differs && sp.a != first->a && nested_in(sp.a, first->a)) {
          first = &sp, deeper = true;
          break;
        }
    }
    d.diverged = true;
    const StepRow &x = a.step(first->a), &y = b.step(first->b);
    d.context = a.context(first_ctx->a).name, d.step = x.name, d.step_depth = x.depth;
    size_t k = first->at ? (size_t)first->at - 1 : 0;
    auto side = [&](Trace& t, const StepRow& s, DiffMatch& out) {
      auto m = t.matches(s.id);
      out.step = s.id;
      if (first->status == DiffStatus::differs && k < m.size()) {
        out.ordinal = m[k].ordinal + 1;  // 1-based, as tinyviz and `frame` count matches
        out.rule = rule_key(t, m[k].rule);
        out.before = one_line(t.label(m[k].before)), out.after = one_line(t.label(m[k].after));
      } else if (first->status == DiffStatus::input_differs) {
        out.before = one_line(t.label(s.input_root));  // the inputs differ: the step's input graph
      }
    };
    side(a, x, d.first_a);
    side(b, y, d.first_b);
  }
  // per-rule match counts over the whole trace (the statistics': they also count matches a trace does not record, a
  // renderer's strings). Without comparing rules (the traces' rules live in different languages), the recorded
  // matches per module: a rule file's name without its extension, a package's __init__ by its folder (files are
  // named after their Python module: symbolic.cpp and symbolic.py are twins), as an imported trace has no other counts
  std::map<std::string, std::pair<int64_t, int64_t>> rules;
  if (d.compared_rules) {
    for (const RuleStatRow& r : a.rule_stats()) rules[rule_key(a, r.rule)].first += (int64_t)r.matches;
    for (const RuleStatRow& r : b.rule_stats()) rules[rule_key(b, r.rule)].second += (int64_t)r.matches;
  } else {
    for (auto [rule, n] : a.match_count_per_rule()) rules[rule_module(a, rule)].first += (int64_t)n;
    for (auto [rule, n] : b.match_count_per_rule()) rules[rule_module(b, rule)].second += (int64_t)n;
  }
  for (auto& [k, v] : rules)
    if (v.first != v.second) d.rules.push_back({k, v.first, v.second});
  std::stable_sort(d.rules.begin(), d.rules.end(),
                   [](auto& x, auto& y) { return std::llabs(x.a - x.b) > std::llabs(y.a - y.b); });
  // kernel time by name
  std::map<std::string, TraceDiff::KernelDelta> kd;
  for (const KernelEventRow& k : a.kernel_events()) {
    auto& e = kd[k.name];
    e.name = k.name, e.runs_a++, e.ms_a += (double)std::max<int64_t>(k.t_end - k.t_start, 0) / 1e6;
  }
  for (const KernelEventRow& k : b.kernel_events()) {
    auto& e = kd[k.name];
    e.name = k.name, e.runs_b++, e.ms_b += (double)std::max<int64_t>(k.t_end - k.t_start, 0) / 1e6;
  }
  for (auto& [k, v] : kd) d.kernels.push_back(v);
  std::stable_sort(d.kernels.begin(), d.kernels.end(),
                   [](auto& x, auto& y) { return std::fabs(x.ms_a - x.ms_b) > std::fabs(y.ms_a - y.ms_b); });
  return d;
}

}  // namespace tg::viz
