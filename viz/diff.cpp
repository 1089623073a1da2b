#include "viz/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

namespace tg::viz {

namespace {

std::string base_name(const std::string& f) { return f.substr(f.rfind('/') + 1); }

// structural hashes of a trace's nodes, computed once per node without recursion
class Shapes {
 public:
  explicit Shapes(Trace& t) : t_(t) {}
  uint64_t of(int64_t root) {
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
      uint64_t h = std::hash<std::string>()(std::string(n.op_name) + "|" + t_.dtype_name(n.dtype) + "|" +
                                            t_.str(n.arg) + "|" + (n.tag ? t_.str(n.tag) : std::string("-")));
      for (int64_t s : n.src) h = (h ^ memo_.at(s)) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
      memo_[id] = h;
    }
    return memo_.at(root);
  }

 private:
  Trace& t_;
  std::unordered_map<int64_t, uint64_t> memo_;
};

std::string rule_key(Trace& t, int64_t rule) {
  auto r = t.rule(rule);
  return r ? base_name(r->file) + ":" + std::to_string(r->line) : "rule " + std::to_string(rule);
}
std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
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

}  // namespace

TraceDiff diff_traces(Trace& a, Trace& b) {
  TraceDiff d;
  d.contexts_a = a.contexts().size(), d.contexts_b = b.contexts().size();
  auto ka = occurrence_keys(a.contexts().size(), [&](size_t i) { return a.contexts()[i].name; });
  auto kb = occurrence_keys(b.contexts().size(), [&](size_t i) { return b.contexts()[i].name; });
  std::map<std::string, size_t> in_b;
  for (size_t i = 0; i < kb.size(); i++) in_b[kb[i]] = i;
  std::map<std::string, size_t> in_a;
  for (size_t i = 0; i < ka.size(); i++) in_a[ka[i]] = i;
  for (size_t i = 0; i < kb.size(); i++)
    if (!in_a.count(kb[i])) d.only_b.push_back(kb[i]);
  Shapes sa(a), sb(b);
  for (size_t i = 0; i < ka.size(); i++) {
    auto it = in_b.find(ka[i]);
    if (it == in_b.end()) {
      d.only_a.push_back(ka[i]);
      continue;
    }
    d.aligned_contexts++;
    const ContextRow &ca = a.contexts()[i], &cb = b.contexts()[it->second];
    auto step_key = [](Trace& t, const ContextRow& c) {
      return occurrence_keys(c.steps.size(), [&](size_t j) {
        const StepRow& s = t.step(c.steps[j]);
        return s.name + " @" + std::to_string(s.depth);
      });
    };
    auto sta = step_key(a, ca), stb = step_key(b, cb);
    std::map<std::string, size_t> sb_at;
    for (size_t j = 0; j < stb.size(); j++) sb_at[stb[j]] = j;
    for (size_t j = 0; j < sta.size(); j++) {
      auto jt = sb_at.find(sta[j]);
      if (jt == sb_at.end()) continue;
      d.aligned_steps++;
      const StepRow &x = a.step(ca.steps[j]), &y = b.step(cb.steps[jt->second]);
      auto ma = a.matches(x.id), mb = b.matches(y.id);
      size_t k = 0;
      for (; k < ma.size() && k < mb.size(); k++) {
        if (rule_key(a, ma[k].rule) != rule_key(b, mb[k].rule) || sa.of(ma[k].before) != sb.of(mb[k].before) ||
            sa.of(ma[k].after) != sb.of(mb[k].after))
          break;
      }
      bool same_input = sa.of(x.input_root) == sb.of(y.input_root);
      if (k == ma.size() && k == mb.size() && same_input) {
        d.equal_steps++;
        continue;
      }
      if (d.diverged) continue;
      d.diverged = true;
      d.context = ca.name, d.step = x.name, d.step_depth = x.depth;
      auto side = [&](Trace& t, const StepRow& s, const std::vector<MatchRow>& m, DiffMatch& out) {
        out.step = s.id;
        if (k < m.size()) {
          out.ordinal = m[k].ordinal + 1;  // 1-based, as tinyviz and `frame` count matches
          out.rule = rule_key(t, m[k].rule);
          out.before = one_line(t.label(m[k].before)), out.after = one_line(t.label(m[k].after));
        } else if (k == 0 && !same_input) {
          out.before = one_line(t.label(s.input_root));  // the inputs differ: the step's input graph
        }
      };
      side(a, x, ma, d.first_a);
      side(b, y, mb, d.first_b);
    }
  }
  // per-rule match counts over the whole trace
  std::map<std::string, std::pair<int64_t, int64_t>> rules;
  for (const RuleStatRow& r : a.rule_stats()) rules[rule_key(a, r.rule)].first += (int64_t)r.matches;
  for (const RuleStatRow& r : b.rule_stats()) rules[rule_key(b, r.rule)].second += (int64_t)r.matches;
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
