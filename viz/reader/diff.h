// Two traces side by side (`tinyviz-cli diff A B`): contexts aligned by name and order, steps by name, depth and order
// inside them, matches compared by their rule (file name, line, source) and by the structure of the nodes before and
// after (op, dtype, arg, sources: not trace ids, which differ between runs). Reports the equal steps, the first
// divergent step and match, per-rule match-count deltas, contexts on one side only and kernel-time deltas by name.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "viz/reader/reader.h"

namespace tg::viz {

struct DiffMatch {                  // one side of the first divergent match
  int64_t step = 0, ordinal = 0;    // ordinal 0: the side has no match there
  std::string rule, before, after;  // rule "file:line", node labels (one line)
};
// the alignment, item by item: A's order, with what only B has placed after the aligned item it follows in B
enum class DiffStatus : uint8_t {
  equal,          // same input graph, same matches
  differs,        // same input graph, a match differs at `at`
  input_differs,  // the input graphs differ (what happened before the step differs)
  only_a,
  only_b
};
struct StepPair {
  int64_t a = 0, b = 0;  // step ids (0: not on that side)
  DiffStatus status = DiffStatus::equal;
  int64_t at = 0;  // differs: the 1-based number of the first match that differs
};
struct ContextPair {
  int64_t a = 0, b = 0;  // context ids (0: not on that side)
  std::vector<StepPair> steps;
  size_t differing = 0;  // steps not equal
};

struct DiffOptions {
  // compare the rule of each match (file name and line). Off, matches are compared by the nodes before and after only:
  // for traces whose rules live in different sources (the port's C++ against an imported reference trace's Python).
  // diff_traces turns it off by itself when the traces' producers differ
  bool compare_rules = true;
};

struct TraceDiff {
  bool compared_rules = true;
  std::vector<ContextPair> pairs;
  size_t contexts_a = 0, contexts_b = 0, aligned_contexts = 0;
  size_t aligned_steps = 0, equal_steps = 0;
  std::vector<std::string> only_a, only_b;  // contexts on one side only ("name #k")
  bool diverged = false;                    // the first aligned step whose matches differ:
  std::string context, step;                // its context and step names
  int64_t step_depth = 0;
  DiffMatch first_a, first_b;
  struct RuleDelta {
    std::string rule;  // "file:line" (rules not compared: the module, "symbolic", and its recorded matches)
    int64_t a = 0, b = 0;
  };
  std::vector<RuleDelta> rules;  // rules whose match counts differ, biggest difference first
  struct KernelDelta {
    std::string name;
    int64_t runs_a = 0, runs_b = 0;
    double ms_a = 0, ms_b = 0;
  };
  std::vector<KernelDelta> kernels;  // every kernel name on either side, biggest time difference first
};

// The first divergence is the first differing step in context and step order, refined into its nested steps: a step
// nested in it whose input is the same but whose matches differ is where the divergence started (a parent's match
// records its result after the nested rewrites it ran), so the report goes down to the deepest such step.
TraceDiff diff_traces(Trace& a, Trace& b, std::optional<DiffOptions> opt = std::nullopt);

// the structure of a trace's nodes (op, dtype, arg, tag, sources; not trace ids), as a hash computed without recursion
class NodeShapes {
 public:
  explicit NodeShapes(Trace& t) : t_(t) {}
  uint64_t of(int64_t node);

 private:
  Trace& t_;
  std::unordered_map<int64_t, uint64_t> memo_;
};

}  // namespace tg::viz
