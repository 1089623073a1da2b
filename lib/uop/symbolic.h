// Port of tinygrad/uop/symbolic.py: the algebraic simplifier. Rule tables are built once (function-local statics,
// so their construction order across files is defined) and named like the reference's module-level matchers.
#pragma once
#include "lib/uop/rewrite.h"

namespace tg {

const PatternMatcher& pm_data_invalid();
const PatternMatcher& pm_remove_invalid();
const PatternMatcher& symbolic_simple();
const PatternMatcher& commutative();
const PatternMatcher& symbolic();
const PatternMatcher& pm_simplify_valid();
const PatternMatcher& pm_drop_and_clauses();
const PatternMatcher& pm_move_where_on_load();
const PatternMatcher& pm_clean_up_group_sink();
const PatternMatcher& sym();

// helpers exposed for tests and other passes
UPat invalid_pat();   // CONST(Invalid) named "i"
UPat invalid_gate();  // cond.where(x, Invalid)
UOp fold_const_alu(const UOp& a);
UOp simplify_valid(const UOp& valid);
UOp uop_given_valid(const UOp& valid, const UOp& uop, bool try_simplex = true);
// Helpers of the symbolic rules that are pure functions of their arguments when nothing is counted or recorded
// (TRACK_MATCH_STATS=0): uop_given_valid and the where-closure fold. Inside a SymbolicMemo their results are remembered
// until the (outermost) memo of the thread closes. Codegen opens one per kernel and the scheduler one per schedule:
// their passes offer the same gated indices and WHEREs again and again, and most come back unchanged.
class SymbolicMemo {
 public:
  SymbolicMemo();
  ~SymbolicMemo();
  SymbolicMemo(const SymbolicMemo&) = delete;
  SymbolicMemo& operator=(const SymbolicMemo&) = delete;

 private:
  bool owner_ = false;
};
// helpers.prod over UOps: functools.reduce(operator.mul, x, 1) (the python int 1 comes first)
UOp py_prod(const std::vector<UOp>& xs);

}  // namespace tg
