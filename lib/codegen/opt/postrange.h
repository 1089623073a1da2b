// Port of tinygrad/codegen/opt/postrange.py: the Scheduler (the kernel's ranges as optimization axes, shift_to,
// apply_opt for every OptOps but tensor cores) and apply_opts (explicit opts, or hand_coded_optimizations).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "lib/codegen/opt/opt.h"
#include "lib/renderer/renderer.h"

namespace tg {

// uop/ops.py axis tables
const char* axis_color(AxisType t);
int axis_to_pos(AxisType t);

class Scheduler {
 public:
  Scheduler(const UOp& ast, const Renderer& ren);
  UOp ast;
  const Renderer* ren;
  bool dont_use_locals = false;
  std::vector<Opt> applied_opts;

  // the optimization axes: ranges ordered by axis type, then by their arg
  std::vector<UOp> rngs() const;
  size_t shape_len() const { return rngs().size(); }
  std::vector<sint> full_shape() const;
  std::vector<AxisType> axis_types() const;
  std::vector<std::string> shape_str() const;

  Scheduler copy() const;
  UOp get_optimized_ast(const std::optional<std::string>& name_override = std::nullopt);
  std::vector<UOp> output_rngs() const;        // _output_rngs
  std::vector<UOp> globalizable_rngs() const;  // _globalizable_rngs
  void convert_loop_to_global();
  std::vector<std::string> colors() const;
  std::string colored_shape() const;
  // returns (replaced_rng, new_rng)
  std::pair<UOp, UOp> shift_to(const UOp& rng, int64_t amount, AxisType new_type, bool top = false,
                               const UOp& input_new_rng = UOp());
  std::vector<UOp> ranges_of(std::initializer_list<AxisType> types) const;
  std::vector<int64_t> axes_of(std::initializer_list<AxisType> types) const;
  pyint upcast_size() const;
  std::vector<int64_t> upcastable_dims() const;
  std::vector<int64_t> unrollable_dims() const;
  int64_t real_axis(OptOps op, std::optional<int64_t> axis) const;
  // apply_opt: the (replaced_rng, new_rng) pair of shift_to when the opt shifts a range
  std::optional<std::pair<UOp, UOp>> apply_opt(const Opt& opt, bool append_opt = true);

  std::vector<UOp> reduceops() const;
  UOp reduceop() const;  // null when there is none
  std::vector<UOp> bufs() const;
  std::vector<sint> output_shape() const;
  size_t upcasted() const;
  size_t group_for_reduces() const;

 private:
  int64_t opt_range_;
  // rngs() of the ast it was computed for (the hand-coded heuristic asks thousands of times between two opts)
  mutable UOp rngs_of_;
  mutable std::vector<UOp> rngs_;
};

// apply_opts(ast, ren, beam): opts_to_apply, else BEAM search when beam >= 1 (search.h), else hand_coded_optimizations
// unless NOOPT
UOp apply_opts(const UOp& ast, const Renderer& ren, int64_t beam = 0);

}  // namespace tg
