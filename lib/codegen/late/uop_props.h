// UOp properties the late stage needs that lib/uop/uop.h does not have yet (reference: UOp.addrspace, buf_uop,
// max_shape, max_numel in uop/ops.py and mixin/movement.py; helpers.is_image_shape). Free functions so the UOp core
// stays untouched; they can move into UOp later.
#pragma once
#include <optional>
#include <vector>

#include "lib/uop/nodemap.h"
#include "lib/uop/uop.h"

namespace tg {

// UOp.addrspace (a recursive_property): memoized over one pass. Iterative, so deep expression graphs are fine.
class AddrSpaceCache {
 public:
  std::optional<AddrSpace> get(const UOp& u);

 private:
  NodeMap<std::optional<AddrSpace>> memo_{8};  // open addressing: no allocation per entry
};
std::optional<AddrSpace> addrspace(const UOp& u);  // one-off (a fresh cache)

// to_max_shape(shape): symbolic dims replaced by their vmax; prod of it
std::vector<pyint> max_shape(const UOp& u);
pyint max_numel(const UOp& u);
// UOp.buf_uop
UOp buf_uop(const UOp& u);
// helpers.is_image_shape
bool is_image_shape(const std::optional<Shape>& shape);

}  // namespace tg
