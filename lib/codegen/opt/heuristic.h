// Port of tinygrad/codegen/opt/heuristic.py: hand_coded_optimizations (no tensor cores: the ported renderers have
// none, so the TC attempt always fails like it does in the reference on CPU; no IMAGE).
#pragma once
#include "lib/codegen/opt/postrange.h"

namespace tg {
Scheduler hand_coded_optimizations(const Scheduler& k);
}  // namespace tg
