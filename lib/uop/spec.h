// Port of tinygrad/uop/spec.py: type verification of UOp graphs (spec_shared, spec_tensor, spec_program, spec_full)
// and type_verify. SPEC=1 verifies graphs at pipeline boundaries; SPEC=2 also checks every UOp as it is created.
#pragma once
#include <optional>

#include "lib/uop/upat.h"

namespace tg {

using SpecMatcher = BasicPatternMatcher<std::optional<bool>>;
const SpecMatcher& spec_shared();
const SpecMatcher& spec_tensor();
const SpecMatcher& spec_program();
const SpecMatcher& spec_full();

class SpecError : public Error {
 public:
  using Error::Error;
};
// every node of the graph must be accepted (a rule returns true); throws SpecError naming the first failing node
void type_verify(const UOp& ast, const SpecMatcher& check_spec, bool enter_calls = true);

}  // namespace tg
