// Rebuilds the graph at every match of a step from the trace: frame 0 is the step's input graph, frame k the graph
// after matches 1..k, given with deltas: nodes added, removed, and changed (old -> new, the rebuilt ancestors and the
// matched node). Semantics follow the reference's VIZ: frame_k = frame_{k-1}.substitute(all replacements so far) for
// top-down steps, input.substitute(all replacements so far) for bottom-up steps and walk=True steps (one pass over the
// input: a replacement that contains the node it replaces, x -> CAST(x), is not rewritten again).
//
// The reference computes every frame with a substitute over the whole graph, so reaching match k of an N-node step
// costs O(k·N) (the last of 17,913 matches on a ~500-node graph: 8 s). Here:
// - bottom-up and walk frames depend only on the replacements so far: frame k is one substitute of the input, O(N);
// - a top-down frame is a fixed point of the replacements so far (every node a substitute returns went through the
//   map), so frame k differs from frame k-1 only in the nodes that have match k's node under them. The replay keeps
//   frame k-1's nodes with their users (reference counts), walks up from the matched node to mark those, and runs the
//   same substitute with every other node of frame k-1 taken as it is: O(ancestors of the match + what changed).
// - a finished trace holds checkpoints of top-down steps with many matches (every kCheckpointEvery-th frame's graph,
//   written by the trace writer at close): a jump replays from the checkpoint before the frame, so reaching any frame
//   costs at most kCheckpointEvery frames.
// Mode::full keeps the reference's whole-graph substitute per frame and Mode::scratch ignores the checkpoints: tests
// and `tinyviz-cli verify --full` check they all give the same frames.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "viz/reader/reader.h"
#include "viz/reader/step_graph.h"

namespace tg::viz {

struct FrameDelta {
  std::vector<int64_t> added, removed;
  std::vector<std::pair<int64_t, int64_t>> changed;  // (node in frame k-1, its replacement in frame k)
  int64_t before = 0, after = 0;                     // the match
};

class StepReplay {
 public:
  enum class Mode { incremental, scratch, full };
  static constexpr size_t kCheckpointEvery = 1024, kCheckpointMin = 2048;  // frames apart; a step's matches
  StepReplay(Trace& trace, int64_t step, Mode mode = Mode::incremental);
  size_t num_frames() const { return matches_.size() + 1; }
  const std::vector<MatchRow>& matches() const { return matches_; }
  int64_t root(size_t k);                      // the frame's root node id
  std::vector<int64_t> nodes(size_t k);        // nodes of frame k, srcs before users
  FrameDelta delta(size_t k);                  // k >= 1: what changed from frame k-1
  bool chained() const { return !(step_.bottom_up || step_.walk); }  // frame k is computed from frame k-1
  bool reproduces_output();                    // the last frame's root is the recorded output root
  std::string error() const { return error_; } // why replay stopped early (a rule error, a cycle)
  bool error_is_damage() const { return damage_; }  // the error is the trace's (names the file), not a recorded one
  // the graph of frame k, for the trace's replay_checkpoints table ("" when the replay stopped at or before k)
  std::string encode_frame(size_t k);
  std::vector<size_t> checkpoint_frames() const;  // the frames this replay has checkpoints for

 private:
  using L = uint32_t;  // a StepGraph node
  static constexpr L kNone = StepGraph::kNone;
  struct LocalDelta {
    std::vector<L> added, removed;
    std::vector<std::pair<L, L>> changed;
  };
  std::string where() const;  // "trace 'PATH': replay of step N"
  L lookup(L n) const { return n < map_.size() ? map_[n] : kNone; }
  // graph_rewrite(root, _substitute, map_, bottom_up=True, walk=walk); incremental: the nodes of frame k-1 that are
  // not dirty are taken as they are
  L substitute(L root, bool walk, bool incremental);
  L local_root(size_t k);
  // chained steps: frame k known (and its delta, when asked), computed from the nearest known frame before it
  void reach(size_t k, bool with_delta);
  void next_chained();           // computes frame cur_ + 1 from frame cur_
  void restart(L root, size_t k);  // frame k's nodes become the live frame
  L decode_frame(const std::string& blob);  // throws TraceError
  L from_input(size_t k);        // a frame of a bottom-up or walk step
  void use_matches(size_t k);    // map_ holds the replacements of matches 1..k
  std::vector<L> local_nodes(L root);
  // frame k-1's nodes of a chained step: reference counts (one per edge) and users (may list users that died)
  bool live(L n) const { return n < slot_.size() && slot_[n].refs > 0; }
  void ref(L root, std::vector<L>* added);
  void unref(L root, std::vector<L>* removed);
  LocalDelta diff(size_t k);  // by comparing the two frames' node sets
  // the (old, new) pairs that took each other's place from root prev to root next; in_new(x): x is in the new frame
  template <class InNew>
  std::vector<std::pair<L, L>> changed_pairs(L prev, L next, InNew in_new);
  template <class T> static void grow(std::vector<T>& v, size_t n, T fill) {
    if (v.size() <= n) v.resize(std::max(n + 1, v.size() * 2), fill);
  }
  Trace& t_;
  StepRow step_;
  Mode mode_;
  StepGraph g_;
  std::vector<MatchRow> matches_;
  std::vector<std::pair<L, L>> lmatch_;  // the matches' before and after
  bool incremental() const { return mode_ != Mode::full; }
  std::vector<L> roots_;            // frame k's root, kNone when not computed yet
  std::vector<LocalDelta> deltas_;  // chained, incremental: the delta of frame k at k-1
  std::vector<char> has_delta_;
  size_t cur_ = 0;                  // chained: the frame last computed (incremental: the live one)
  size_t stop_ = 0;                 // chained: the frame where the replay stopped (a rule error, damage), 0: none
  std::vector<std::pair<size_t, std::string>> checkpoints_;  // (frame, encoded graph)
  std::vector<L> map_, map_keys_;   // replacements of matches 1..map_matches_
  size_t map_matches_ = 0;
  // per node, together (a deep replay touches them at random among hundreds of thousands of nodes)
  struct Slot {
    int32_t refs = 0;          // chained steps: references from frame k-1 (one per edge)
    uint32_t dirty = 0;        // == dirty_stamp_: in frame k-1 with the matched node under it
    L replace = kNone;         // substitute's result, valid where replaced == stamp_
    uint32_t replaced = 0, on_stack = 0;
  };
  Slot& slot(L n) {
    grow(slot_, n, Slot{});
    return slot_[n];
  }
  std::vector<Slot> slot_;
  std::vector<std::vector<L>> users_;
  uint32_t dirty_stamp_ = 0, stamp_ = 0;
  size_t n_dirty_ = 0;
  std::string error_;
  bool damage_ = false;
};

// "" when every frame of the step's replay equals the one Mode::full builds (root, added and removed nodes, changed
// pairs) and both stop with the same error; else what differs first
std::string frames_differ(Trace& t, int64_t step);

}  // namespace tg::viz
