// Python-compatible text formatting shared by the engine and the trace reader (which must not link the engine).
#pragma once
#include <string>
#include <string_view>

namespace tg {
std::string py_float_repr(double x);        // repr(float): shortest round trip, '1e-05', 'inf', 'nan'
std::string py_str_repr(std::string_view s);  // repr(str): 'abc'
}  // namespace tg
