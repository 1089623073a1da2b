// Port of tinygrad/codegen/opt/heuristic.py: hand_coded_optimizations (no tensor cores: the ported renderers have
// none, so the TC attempt always fails like it does in the reference on CPU; no IMAGE).
#pragma once
#include "lib/codegen/opt/postrange.h"

namespace tg {
Scheduler hand_coded_optimizations(const Scheduler& k);
// whether CPU register tiles (CPU_TILE=1, not in the reference) apply to kernels of this renderer: DEV=CPU's CLANG
// renderer, whose IR spells each contraction, so another tile computes the same values
bool cpu_tiles_apply(const Renderer& ren);
}  // namespace tg
