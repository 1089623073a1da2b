// Display text of an encoded arg (lib/uop/serialize.h format) without linking the engine: python repr.
#pragma once
#include <string>

namespace tg::viz {
std::string arg_display(const std::string& encoded);  // "(0, AxisType.LOOP)", "1.0", "'gidx0'", "dtypes.float"
}
