// The late part of tinygrad/codegen/__init__.py: from the SINK full_rewrite_to_sink returns to the linear program the
// renderers consume (pm_linearize_cleanups, line_rewrite, do_linearize), then rendering (do_render).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "lib/uop/rewrite.h"

namespace tg {

class Renderer;

// a line rewrite rule's result: the node that replaces the matched one (for later srcs) and the lines it becomes
struct LineRewrite {
  UOp replaced;
  std::vector<UOp> lines;
};
using LinePatternMatcher = BasicPatternMatcher<std::optional<LineRewrite>>;

// gated STORE -> IF, STORE, ENDIF (the only use of IF/ENDIF); IF/ENDIF in the graph are an error
const LinePatternMatcher& pm_linearize_cleanups();
// like graph_rewrite, but over a toposorted list of lines
std::vector<UOp> line_rewrite(const std::vector<UOp>& lst, const LinePatternMatcher& pm, CtxRef ctx = {});
// line_rewrite(linearize(sink), pm_linearize_cleanups)
std::vector<UOp> do_linearize(const UOp& sink);
// the PROGRAM's SOURCE: renderer.render(do_linearize(sink))
std::string do_render(const Renderer& ren, const UOp& sink);

}  // namespace tg
