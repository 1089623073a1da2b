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
// uop_given_valid is a pure function of its arguments when nothing is counted or recorded (TRACK_MATCH_STATS=0):
// inside a GivenValidMemo its results are remembered until the (outermost) memo of the thread closes. Codegen opens
// one per kernel: its passes offer the same gated indices to the valid rules again and again, and most come back
// unchanged after the same substitutions and simplifications.
class GivenValidMemo {
 public:
  GivenValidMemo();
  ~GivenValidMemo();
  GivenValidMemo(const GivenValidMemo&) = delete;
  GivenValidMemo& operator=(const GivenValidMemo&) = delete;

 private:
  bool owner_ = false;
};
// helpers.prod over UOps: functools.reduce(operator.mul, x, 1) (the python int 1 comes first)
UOp py_prod(const std::vector<UOp>& xs);

}  // namespace tg
