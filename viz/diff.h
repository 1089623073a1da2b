// Two traces side by side (`tinyviz-cli diff A B`): contexts aligned by name and order, steps by name, depth and order
// inside them, matches compared by their rule (file name, line, source) and by the structure of the nodes before and
// after (op, dtype, arg, sources: not trace ids, which differ between runs). Reports the equal steps, the first
// divergent step and match, per-rule match-count deltas, contexts on one side only and kernel-time deltas by name.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "viz/reader.h"

namespace tg::viz {

struct DiffMatch {                  // one side of the first divergent match
  int64_t step = 0, ordinal = 0;    // ordinal 0: the side has no match there
  std::string rule, before, after;  // rule "file:line", node labels (one line)
};
struct TraceDiff {
  size_t contexts_a = 0, contexts_b = 0, aligned_contexts = 0;
  size_t aligned_steps = 0, equal_steps = 0;
  std::vector<std::string> only_a, only_b;  // contexts on one side only ("name #k")
  bool diverged = false;                    // the first aligned step whose matches differ:
  std::string context, step;                // its context and step names
  int64_t step_depth = 0;
  DiffMatch first_a, first_b;
  struct RuleDelta {
    std::string rule;  // "file:line"
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

TraceDiff diff_traces(Trace& a, Trace& b);

}  // namespace tg::viz
