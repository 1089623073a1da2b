// One frame of a rewrite step as the graph view draws it: the visible nodes (consts folded into their users' labels,
// widely shared leaves drawn once per use), the edges with their source ports, the rewrite-diff marks, and the text
// the side panel shows. Plain data, built on a worker thread by frame_builder and never changed afterwards.
#pragma once
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "gui/layout.h"
#include "viz/reader/reader.h"

namespace tv {

enum class Mark : uint8_t { none, added, changed };

// the `via` of a placeholder's key: its key.id is the collapsed node it stands under
constexpr int64_t kPlaceholderVia = INT64_MIN;

struct GNode {
  NodeKey key;
  std::string op;
  std::vector<std::string> lines;  // lines[0] is the op; then dtype, arg, and one line per folded source
  int folded_from = -1;            // index of the first folded-source line (-1: none)
  int facts_from = -1;             // index of the first compiler-facts line (label_facts.h; -1: none)
  int result_line = -1;            // the folded-source line that is the match's result (a match that folded a node
                                   // into a constant: its users are boxed and this line marked; -1: none)
  char addrspace = 0;              // 'G'lobal, 'L'ocal, 'R'eg, 'A'lu: the reference's coloured square (0: none)
  Mark mark = Mark::none;
  bool in_match = false;  // part of the subgraph the match put in (boxed)
  bool is_root = false;
  int64_t ref_context = 0;  // a CALL (or a kernel's SINK): the codegen context of its kernel (Enter opens it)
  bool body_hidden = false;  // a CALL/FUNCTION/PROGRAM drawn without its kernel body
  size_t hides = 0;     // > 0: the placeholder of a collapsed node's sources (key {node, kPlaceholderVia}), hiding this
                        // many nodes
  double w = 0, h = 0;  // size in scene pixels (label metrics)
};

struct GEdge {
  int src = 0, dst = 0;      // indices into FrameGraph::nodes
  int port = 0;              // index in the consumer's sources
  int slot = 0, nslots = 1;  // position among the consumer's visible in-edges (for drawing the port)
  // not a source: "runs after", from src i+1 of a LINEAR to its src i (drawn dashed), so a program's calls stand in a
  // column in their order instead of in one row of hundreds
  bool order = false;
};

// a node's text: the same in every frame (ids are hash-consed content), so shared by all frames that show it
struct NodeText {
  std::string label;  // Trace::label
  std::string expr;   // infix text of its sub-expression (bounded)
};
using NodeTextPtr = std::shared_ptr<const NodeText>;

// how a node draws, the same in every frame for one choice of folding consts: its label lines (kernel name and folded
// consts included), the codegen context it opens, and the label's size (measuring text was half of building a frame)
struct NodeLook {
  std::string op;
  std::vector<std::string> lines;
  int folded_from = -1;
  int facts_from = -1;
  char addrspace = 0;
  int64_t ref_context = 0;
  double w = 0, h = 0;
};
using NodeLookPtr = std::shared_ptr<const NodeLook>;

// what the side panel shows for any node of the frame (including folded consts)
struct NodeInfo {
  NodeTextPtr text;
  std::vector<int64_t> src, users;
  const std::string& label() const { return text->label; }
  const std::string& expr() const { return text->expr; }
};

struct FrameGraph {
  int64_t step = 0;
  size_t frame = 0, num_frames = 1;
  int64_t root = 0;
  std::vector<GNode> nodes;
  std::vector<GEdge> edges;
  std::vector<GNode> ghosts;  // removed since the previous frame (placed where that frame had them)
  std::unordered_map<int64_t, NodeInfo> info;
  size_t n_uops = 0;  // nodes of the frame, before folding
  // the match that produced this frame (frame > 0)
  std::optional<tg::viz::MatchRow> match;
  std::optional<tg::viz::RuleRow> rule;
  std::string before_text, after_text;  // labels and expression listings of the matched node and its replacement
  std::string match_line;               // the match in one line: "before  →  after", each side's expression (cut)
  bool folded_result = false;           // the replacement is a constant drawn in its users' labels (boxed: the users)
  size_t n_added = 0, n_removed = 0, n_changed = 0;
  std::vector<int64_t> added, removed;  // StepReplay::delta ids (all, not only visible)
  std::vector<std::pair<int64_t, int64_t>> changed;
  std::string error;                    // replay problem (rule error, cycle), shown in the window
  bool error_is_damage = false;         // the trace's problem (a TraceError naming the file), not a recorded error
  std::vector<int64_t> collapsed;       // the nodes drawn collapsed (by the user, or automatically)
  std::vector<int64_t> auto_collapsed;  // of those, the ones collapsed automatically (a big graph)
  std::vector<int64_t> bodies_hidden;   // CALL/FUNCTION/PROGRAM nodes drawn without their kernel body
  size_t n_filtered = 0;                // nodes left out by the display filters (bodies, SINK, indexing)

  LayoutGraph layout_graph() const;
  size_t bytes() const;  // about what it holds (shared node texts not counted), for the frame cache's bound
};

struct FrameOptions {
  bool fold_consts = true;   // draw CONST sources inside their users' labels
  bool split_leaves = true;  // draw leaves with >= 3 users once per use
  bool hide_implied_edges = true;  // a node with wide_srcs+ drawn sources: no edge to a source another of them reaches
  bool linear_as_column = true;    // a LINEAR with wide_srcs+ drawn sources: its sources chained in order
  size_t wide_srcs = 8;
  int focus_hops = 0;        // > 0: only the nodes this many edges from what the match put in (frame 0: from the
                             // node the first match rewrites); the others are counted on the boundary nodes. Every
                             // frame then gets a fresh layout (the drawn sets differ too much to keep places)
  // Collapsing: a collapsed node's sources subtree (the nodes reachable only through it) is drawn as one placeholder
  // that counts them. By UOp id, so it holds in every frame where the node exists.
  std::set<int64_t> collapsed;  // collapsed by the user
  std::set<int64_t> expanded;   // expanded by the user (auto-collapse leaves them open)
  bool auto_collapse = true;    // a graph of more than auto_collapse_above drawn nodes starts with subtrees collapsed,
  size_t auto_collapse_above = 400, auto_collapse_target = 250;  // until about auto_collapse_target are left
  size_t auto_collapse_min = 8;  // a subtree worth collapsing automatically hides at least this many drawn nodes
  // The reference VIZ's display toggles, with its defaults. show_call_src (c): a CALL's or FUNCTION's kernel body (its
  // src 0) and a PROGRAM's sources 0 and 1 are drawn; off, the CALL is one node with its buffers, and `collapsed` /
  // `expanded` name the CALLs that differ (the per-node toggle). show_sink (s): a SINK nothing uses is drawn.
  // show_indexing (r): nodes of dtype weakint (index arithmetic) are drawn. What the match touched is always drawn.
  bool show_call_src = false, show_sink = false, show_indexing = true;
  // the reference's compiler facts under each label (ranges, range sizes, the address space; label_facts.h), and of
  // those the long ones (an INDEX's rendered expression)
  bool label_facts = true, long_facts = true;
  bool operator==(const FrameOptions&) const = default;
};
constexpr size_t kAutoCollapseAbove = 400;  // the default of FrameOptions::auto_collapse_above

using FrameGraphPtr = std::shared_ptr<const FrameGraph>;

}  // namespace tv
