// Port of graph_rewrite and RewriteContext (tinygrad/uop/ops.py): the fixed-point driver (unified_rewrite) and the
// single-pass MLIR-style driver (walk_rewrite), bottom-up and top-down matchers, BottomUpGate, substitute.
#pragma once
#include <source_location>
#include <vector>

#include "lib/uop/nodemap.h"
#include "lib/uop/upat.h"

namespace tg {

// raised by a bottom-up rule to stop the rewrite from descending into a node's srcs
struct BottomUpGate {};
// the same without an exception (a throw costs microseconds; pm_gate_substitute gates most nodes it sees): the rule
// calls this and returns no match
inline void request_bottom_up_gate() { detail::bottom_up_gate = true; }

struct RewriteOpts {
  CtxRef ctx;
  bool bottom_up = false;      // pm is applied before the srcs (bpm slot)
  const char* name = nullptr;  // the step name in traces (default "graph_rewrite")
  const PatternMatcher* bpm = nullptr;
  bool walk = false;         // single pass, no re-rewrite of replacements
  bool enter_calls = false;  // rewrite inside CALL/FUNCTION bodies
  // results of earlier rewrites of other roots with the same pm, no bpm and no ctx, when pm is a pure function of the
  // node (its rules read nothing else): a node found here takes its recorded result without a visit, and every result
  // of this rewrite is added. Only when nothing is counted (TRACK_MATCH_STATS=0): a trace must show every match.
  NodeMap<UOp>* memo = nullptr;
  // the same with every node's cached simplify() as the memo: read, and written for every node the rewrite visits
  // (pm must be symbolic(); only UOp::simplify sets this). Not when the graph holds a CALL body it does not enter.
  bool simplify_memo = false;
};

// graph_rewrite(sink, pm, ctx=, bottom_up=, name=, bpm=, walk=, enter_calls=)
UOp graph_rewrite(const UOp& sink, const PatternMatcher& pm, const RewriteOpts& opts = {},
                  std::source_location loc = std::source_location::current());
// pm=None (only a bpm)
UOp graph_rewrite_bpm(const UOp& sink, const PatternMatcher* pm, const PatternMatcher& bpm,
                      const RewriteOpts& opts = {}, std::source_location loc = std::source_location::current());

namespace detail {
// how many nodes this thread's graph_rewrites found claimed by a rewrite running on another thread (their state was
// kept in a hash map instead of a slot the node points to): for tests of the driver's claims
size_t rewrite_unclaimed_nodes();
}  // namespace detail

// _substitute: every node found in the ctx map (UOpMap<UOp>) is replaced; use bottom_up=true
const PatternMatcher& pm_substitute();

}  // namespace tg
