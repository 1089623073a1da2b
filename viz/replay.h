// Rebuilds the graph at every match of a step from the trace: frame 0 is the step's input graph, frame k the graph
// after matches 1..k. Frames are computed from the previous frame (never by replaying the step from the start) and
// given as deltas: nodes added, removed, and changed (old -> new, the rebuilt ancestors and the matched node).
// Semantics follow the reference's VIZ: frame_k = frame_{k-1}.substitute(all replacements so far) for top-down
// steps, input.substitute(all replacements so far) for bottom-up steps and walk=True steps (one pass over the input:
// a replacement that contains the node it replaces, x -> CAST(x), is not rewritten again).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "viz/reader.h"

namespace tg::viz {

struct FrameDelta {
  std::vector<int64_t> added, removed;
  std::vector<std::pair<int64_t, int64_t>> changed;  // (node in frame k-1, its replacement in frame k)
  int64_t before = 0, after = 0;                     // the match
};

class StepReplay {
 public:
  StepReplay(Trace& trace, int64_t step);
  size_t num_frames() const { return matches_.size() + 1; }
  const std::vector<MatchRow>& matches() const { return matches_; }
  int64_t root(size_t k);                      // the frame's root node id
  std::vector<int64_t> nodes(size_t k);        // nodes of frame k, srcs before users
  FrameDelta delta(size_t k);                  // k >= 1: what changed from frame k-1
  bool reproduces_output();                    // the last frame's root is the recorded output root
  std::string error() const { return error_; } // why replay stopped early (a rule error, a cycle)
  bool error_is_damage() const { return damage_; }  // the error is the trace's (names the file), not a recorded one

 private:
  std::string where() const;  // "trace 'PATH': replay of step N"
  int64_t substitute(int64_t root, bool walk);
  int64_t rebuild(int64_t n, const std::vector<int64_t>& new_src);
  Trace& t_;
  StepRow step_;
  std::vector<MatchRow> matches_;
  std::vector<int64_t> roots_;  // computed frames
  std::vector<std::pair<int64_t, int64_t>> repl_;  // replacements so far, in order
  std::unordered_map<int64_t, int64_t> map_;
  std::string error_;
  bool damage_ = false;
};

}  // namespace tg::viz
