// tinyviz-cli diff: two traces side by side (viz/reader/diff.h).
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "viz/cli/cli_common.h"
#include "viz/reader/diff.h"

namespace tg::viz {

using json = nlohmann::ordered_json;

int cmd_diff(Trace& a, int argc, char** argv, bool as_json) {
  if (argc < 1) throw TraceError("diff takes two traces: tinyviz-cli diff A.db B.db [--by-rule|--by-nodes] [--json]");
  std::optional<DiffOptions> opt;
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "--by-rule"))
      opt = DiffOptions{true};
    else if (!std::strcmp(argv[i], "--by-nodes"))
      opt = DiffOptions{false};
    else
      throw TraceError(std::string("diff: unknown argument '") + argv[i] + "' (--by-rule, --by-nodes, --json)");
  }
  auto b = Trace::open(argv[0]);
  TraceDiff d = diff_traces(a, *b, opt);
  auto side = [](const DiffMatch& m) {
    return json{{"step", m.step}, {"match", m.ordinal}, {"rule", m.rule}, {"before", m.before}, {"after", m.after}};
  };
  if (as_json) {
    json j = {{"a", a.path()},
              {"b", b->path()},
              {"contexts_a", d.contexts_a},
              {"contexts_b", d.contexts_b},
              {"compared_rules", d.compared_rules},
              {"aligned_contexts", d.aligned_contexts},
              {"aligned_steps", d.aligned_steps},
              {"equal_steps", d.equal_steps},
              {"only_a", d.only_a},
              {"only_b", d.only_b}};
    if (d.diverged)
      j["first_divergence"] = {{"context", d.context},
                               {"step", d.step},
                               {"depth", d.step_depth},
                               {"a", side(d.first_a)},
                               {"b", side(d.first_b)}};
    json rules = json::array(), kernels = json::array();
    for (const auto& r : d.rules) rules.push_back({{"rule", r.rule}, {"a", r.a}, {"b", r.b}});
    for (const auto& k : d.kernels)
      kernels.push_back(
          {{"kernel", k.name}, {"runs_a", k.runs_a}, {"runs_b", k.runs_b}, {"ms_a", k.ms_a}, {"ms_b", k.ms_b}});
    j["rules"] = std::move(rules), j["kernels"] = std::move(kernels);
    std::printf("%s\n", j.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    return d.diverged || !d.only_a.empty() || !d.only_b.empty() ? 1 : 0;
  }
  std::printf("A  %s: %zu contexts\nB  %s: %zu contexts\n", a.path().c_str(), d.contexts_a, b->path().c_str(),
              d.contexts_b);
  if (!d.compared_rules)
    std::printf(
        "matches compared by their nodes only, not by rule (the traces come from different producers, or "
        "--by-nodes)\n");
  std::printf("aligned %zu contexts and %zu steps: %zu steps equal (same input graph, same matches)\n",
              d.aligned_contexts, d.aligned_steps, d.equal_steps);
  auto list = [](const char* what, const std::vector<std::string>& v) {
    if (v.empty()) return;
    std::printf("contexts only in %s (%zu):", what, v.size());
    for (size_t i = 0; i < v.size() && i < 8; i++) std::printf("%s %s", i ? "," : "", v[i].c_str());
    std::printf("%s\n", v.size() > 8 ? ", ..." : "");
  };
  list("A", d.only_a);
  list("B", d.only_b);
  if (d.diverged) {
    std::printf("first divergence: context \"%s\", step \"%s\" (depth %lld)\n", d.context.c_str(), d.step.c_str(),
                (long long)d.step_depth);
    for (auto [name, m] : {std::pair<const char*, const DiffMatch*>{"A", &d.first_a}, {"B", &d.first_b}}) {
      if (m->ordinal)
        std::printf("  %s  step %lld match %lld  %s  %s -> %s\n", name, (long long)m->step, (long long)m->ordinal,
                    m->rule.c_str(), m->before.c_str(), m->after.c_str());
      else if (!m->before.empty())
        std::printf("  %s  step %lld: its input graph differs: %s\n", name, (long long)m->step, m->before.c_str());
      else
        std::printf("  %s  step %lld: no match there (the step ends)\n", name, (long long)m->step);
    }
  } else if (d.aligned_steps) {
    std::printf("no divergence: every aligned step has the same input and the same matches\n");
  } else {
    std::printf("no steps to compare: no context of one trace has a twin in the other\n");
  }
  if (!d.rules.empty()) {
    std::printf("%s whose match counts differ (%zu):\n%10s %10s %10s  %s\n", d.compared_rules ? "rules" : "modules",
                d.rules.size(), "A", "B", "B-A", d.compared_rules ? "rule" : "module");
    for (size_t i = 0; i < d.rules.size() && i < 20; i++)
      std::printf("%10lld %10lld %+10lld  %s\n", (long long)d.rules[i].a, (long long)d.rules[i].b,
                  (long long)(d.rules[i].b - d.rules[i].a), d.rules[i].rule.c_str());
  }
  if (!d.kernels.empty()) {
    std::printf("kernel time by name (biggest differences):\n%10s %10s %6s %6s  kernel\n", "A ms", "B ms", "runs A",
                "runs B");
    for (size_t i = 0; i < d.kernels.size() && i < 10; i++)
      std::printf("%10.3f %10.3f %6lld %6lld  %s\n", d.kernels[i].ms_a, d.kernels[i].ms_b,
                  (long long)d.kernels[i].runs_a, (long long)d.kernels[i].runs_b, d.kernels[i].name.c_str());
  }
  return d.diverged || !d.only_a.empty() || !d.only_b.empty() ? 1 : 0;
}

}  // namespace tg::viz
