// The late part of tinygrad/codegen/__init__.py: from the SINK full_rewrite_to_sink returns to the linear program the
// renderers consume (pm_linearize_cleanups, line_rewrite, do_linearize), then rendering (do_render).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <unordered_map>

#include "lib/uop/rewrite.h"

namespace tg {

class Renderer;

// ProgramInfo (uop/ops.py): the arg of a PROGRAM, what a launcher needs. Dims are python int|UOp (sint).
struct ProgramInfo final : ArgObj {
  std::string name = "test";
  std::vector<sint> global_size{1, 1, 1};
  std::optional<std::vector<sint>> local_size = std::vector<sint>{1, 1, 1};
  std::vector<UOp> vars;  // Variable PARAMs (addrspace ALU), by slot
  std::vector<int64_t> globals, outs, ins;  // slots of the buffer PARAMs, of those stored to, of those loaded from
  std::string target;     // Target repr

  std::string function_name() const;
  // the names of the variables filled by the launcher (core_id) -> their index in vars
  std::vector<std::pair<std::string, size_t>> runtimevars() const;
  // global and local size with the variables substituted
  std::pair<std::vector<pyint>, std::optional<std::vector<pyint>>> launch_dims(
      const std::unordered_map<std::string, pyint>& var_vals) const;
  // the values of vars in order, nullopt for the runtime vars; throws naming an unbound Variable
  std::vector<std::optional<pyint>> vals(const std::unordered_map<std::string, pyint>& var_vals) const;
  static ProgramInfo from_sink(const UOp& sink, const std::string& target = "");
  Arg to_arg() const { return Arg(static_cast<const ArgObj*>(new ProgramInfo(*this))); }

  ProgramInfo() = default;
  ProgramInfo(const ProgramInfo& o)
      : ArgObj(), name(o.name), global_size(o.global_size), local_size(o.local_size), vars(o.vars), globals(o.globals),
        outs(o.outs), ins(o.ins), target(o.target) {}
  size_t hash() const override;
  bool equals(const ArgObj& o) const override;
  std::string repr() const override;
  const char* type_name() const override { return "ProgramInfo"; }
  void for_each_uop(void (*fn)(const UOp&, void*), void* ctx) const override;
};

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
// CPU_TILE=1 (not in the reference): IF(gate) ... ENDIF around a loop whose register accumulators are only read where
// a gate known before the loop holds (the invalid taps of a transposed convolution), so a false gate skips the loop
std::vector<UOp> skip_gated_reduce_loops(std::vector<UOp> lst);
// the PROGRAM's SOURCE: renderer.render(do_linearize(sink))
std::string do_render(const Renderer& ren, const UOp& sink);

// pm_to_program (ctx: const Renderer): PROGRAM(sink) -> PROGRAM(sink, LINEAR) -> PROGRAM(sink, LINEAR, SOURCE).
// Not ported yet: do_estimates (Estimates), do_assemble (ISA renderers) and do_compile (compilers live in backends).
const PatternMatcher& pm_to_program();
// the end of do_to_program for a SINK full_rewrite_to_sink returned: PROGRAM(arg=ProgramInfo) rewritten with
// pm_to_program in a "linearize/render" step
UOp to_program_from_full_sink(const UOp& full_sink, const Renderer& ren);

// Kernels in the trace: when PROFILE or a trace is on, each PROGRAM is recorded once (name, device, the trace context
// it was generated in, source, linearized UOps, launch dims, estimates); kernel runs refer to it by this id.
uint64_t record_program(const UOp& prg, const std::string& device);  // 0 when nothing is recorded
uint64_t recorded_program_id(const UOp& prg);                        // 0 when it was not recorded
// print_uops (uop/render.py) without colours: "   3 Ops.ADD   : dtypes.float  [1, 2]  None", one line per UOp
std::string format_uops(const std::vector<UOp>& uops);

}  // namespace tg
