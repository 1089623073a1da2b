// Port of tinygrad/schedule/memory.py: memory_plan_rewrite suballocates the internal buffers of a LINEAR into one
// arena per (device, copy lane) with the reference's TLSFAllocator, so arena sizes and offsets are identical.
#pragma once
#include "lib/helpers.h"
#include "lib/uop/uop.h"

namespace tg {

extern ContextVar NO_MEMORY_PLANNER;

UOp memory_plan_rewrite(const UOp& linear, const UOpSet& held_bufs = {});

}  // namespace tg
