// Port of tinygrad/codegen/__init__.py: full_rewrite_to_sink (every pass of per-kernel codegen, in the reference's
// order and with its step names) and the matchers used there: the expander, broadcast expansion and loads, the
// devectorizer, reduce -> register accumulator, local buffers, barriers, casted consts, parameter numbering.
// to_program wraps one kernel's codegen + linearize/render in a trace context named after the kernel (do_to_program).
#pragma once
#include <string>
#include <vector>

#include "lib/renderer/renderer.h"
#include "lib/schedule/multi.h"  // multi_pm (full_rewrite_to_sink runs it first)

namespace tg {

const PatternMatcher& pm_number_params();
const PatternMatcher& expander2();
const PatternMatcher& pm_wmma_add();
const PatternMatcher& pm_expand_broadcast();
const PatternMatcher& ew_devectorizer();
const PatternMatcher& devectorizer2();
const PatternMatcher& pm_reduce_local();
const PatternMatcher& pm_add_loads();
const PatternMatcher& pm_add_local_buffers();
const PatternMatcher& pm_cast_float_alu();
const PatternMatcher& pm_implicit_barriers();
const PatternMatcher& pm_casted_consts();

struct ReduceContext {
  int64_t acc_num = 0;
};
struct LocalBufferContext {
  int64_t next = 0;  // itertools.count(0)
};
// {axis id of each UPCAST/UNROLL range: its position}, the expander's ctx
struct RangeMap {
  std::vector<std::pair<int64_t, int64_t>> m;
  const int64_t* find(int64_t k) const;
};
RangeMap build_range_map(const UOp& sink);

// every pass is a named graph_rewrite (a step in traces: VIZ=-1 / TRACK_MATCH_STATS=2 show the reference's steps)
UOp full_rewrite_to_sink(const UOp& ast, const Renderer& ren, bool optimize = true);
// do_to_program for a SINK: codegen, ProgramInfo, linearize/render; one trace context named after the kernel
UOp to_program(const UOp& ast, const Renderer& ren);
// to_program on this thread's private nodes (PrivateNodes, uop.h): the AST copied in, the program handed out. A
// parallel lowering's workers then share no node, count or intern bucket while they work
UOp to_program_private(const UOp& ast, const Renderer& ren);

}  // namespace tg
