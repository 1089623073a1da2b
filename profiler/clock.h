// The host clock every profile event, trace context and step is stamped with.
#pragma once
#include <cstdint>

namespace tg {

// monotonic nanoseconds (steady clock); the reference's perf_counter_us, in ns
int64_t now_ns();

}  // namespace tg
