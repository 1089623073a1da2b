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
// helpers.prod over UOps: functools.reduce(operator.mul, x, 1) (the python int 1 comes first)
UOp py_prod(const std::vector<UOp>& xs);

}  // namespace tg
