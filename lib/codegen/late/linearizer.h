// Port of tinygrad/codegen/late/linearizer.py: the priority toposort that turns a kernel SINK into a linear program,
// the control-flow edges that order sibling loops (CFGContext, pm_add_control_flow) and pm_split_ends.
#pragma once
#include <span>
#include <vector>

#include "lib/uop/rewrite.h"

namespace tg {

// toposort of sink where, among the orders the graph allows, nodes run as close to the "ideal" order as possible:
// (run count of the enclosing ranges, op priority, PARAM slot, tuplize) ascending
std::vector<UOp> linearize(const UOp& sink);

// python's == and < on UOp.tuplize, (op.value, arg, dtype, *src.tuplize) without the tag, for the nodes of one
// toposorted list (the linearizer's tie-break): every node gets the number of its tuplize class (equal numbers <=>
// equal tuplizes), srcs first, so comparing two srcs is one comparison instead of a walk of both graphs. Positions
// index the list, which must outlive this.
class TuplizeOrder {
 public:
  explicit TuplizeOrder(std::span<const UOp> toposorted);
  TuplizeOrder(std::span<const UOp> toposorted, BorrowedNodeMap<size_t>& positions);
  bool eq(size_t a, size_t b) const { return cls_[a] == cls_[b]; }
  bool lt(size_t a, size_t b) const;
  // the positions of the srcs of the node at position i
  std::span<const uint32_t> srcs(size_t i) const {
    return {src_pos_.data() + src_begin_[i], src_begin_[i + 1] - src_begin_[i]};
  }

 private:
  void build(BorrowedNodeMap<size_t>& pos);
  std::span<const UOp> lst_;
  std::vector<uint32_t> cls_;                  // by position
  std::vector<uint32_t> arg_;                  // by position: equal ids for python-equal args
  std::vector<uint8_t> op_;                    // by position (lt reads these, not the nodes)
  std::vector<uint32_t> dtype_;                // by position: dtypes in python's < order
  std::vector<uint32_t> src_begin_, src_pos_;  // positions of each node's srcs
};

// the relationships between END nodes (nested, dependent, independent); edges maps a RANGE to the node (an END or
// the enclosing RANGE) it must come after
struct CFGContext {
  explicit CFGContext(const UOp& sink);
  UOpMap<UOp> edges;
};
// RANGE -> RANGE with the ordering edge appended to its srcs (ctx: CFGContext); run bottom-up
const PatternMatcher& pm_add_control_flow();
// END(x, r0, r1, ...) -> nested single-range ENDs, ranges ordered by arg (largest innermost, as the reference); with
// LOOP_ORDER=1 (the default, not in the reference) the output loops among them are then nested by how far each one's
// step moves the kernel's memory accesses, the least moving innermost (same ops per output: bit-identical results)
const PatternMatcher& pm_split_ends();
UOp do_split_ends(const UOp& e);

}  // namespace tg
