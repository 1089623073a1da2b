// UOp properties and builders of tinygrad/uop/ops.py that only the scheduler needs so far (free functions, like
// lib/codegen/late/uop_props.h, so the UOp core stays untouched).
#pragma once
#include <optional>

#include "lib/codegen/late/uop_props.h"
#include "lib/uop/uop.h"

namespace tg {

UOp unsharded_base(const UOp& u);                     // UOp.unsharded_base
UOp copy_to_device(const UOp& u, const Arg& device);  // UOp.copy_to_device (no MSELECT arg: one device)
// UOp.contiguous_view_offset (over lib/device.h contiguous_view): the element offset when the movement ops on a
// buffer read one contiguous range
std::optional<int64_t> contiguous_view_offset(const UOp& u);
// UOp.key: a structural key of the graph (op, dtype, arg and the srcs' keys), 128 bits as 32 hex digits
std::string uop_key(const UOp& u);

}  // namespace tg
