// Port of tinygrad/codegen/gpudims.py: GLOBAL/LOCAL/THREAD ranges become SPECIAL launch indexes (or the core_id
// variable on threaded CPU targets), DEVICE ranges the _device_num variable.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "lib/renderer/renderer.h"

namespace tg {

// get_grouped_dims(prefix, dims, max_sizes, reverse): index expressions for each dim over at most len(max_sizes)
// SPECIALs (dims grouped or split to fit)
std::vector<UOp> get_grouped_dims(const std::string& prefix, const std::vector<sint>& dims,
                                  const std::optional<std::vector<pyint>>& max_sizes, bool reverse = false);
const PatternMatcher& pm_add_gpudims();  // ctx: const Renderer

}  // namespace tg
