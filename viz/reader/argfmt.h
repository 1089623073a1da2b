// Display text of an encoded arg (lib/uop/serialize.h format) without linking the engine: python repr.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>

namespace tg::viz {

// a malformed encoding (the trace reader turns it into a TraceError naming the file, the uop and the string)
class ArgFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

constexpr int kMaxArgNesting = 64;  // tuples in tuples: the engine's deepest args nest a few levels

// "(0, AxisType.LOOP)", "1.0", "'gidx0'", "dtypes.float"; throws ArgFormatError for a malformed encoding (unknown
// tag, a string length past the end, nesting deeper than kMaxArgNesting, trailing bytes)
// Strings are shown without the terminal colours (ESC [ ... letter) tinygrad puts in kernel names: a kernel's
// ProgramInfo(name='E_2') and context name read as the reference's VIZ shows them, never as escapes.
std::string arg_display(const std::string& encoded);

// a float arg as the reference's VIZ labels a float CONST (python's f"{x:g}": 6 significant digits, "0.001" for
// 0.0010000000000000009, "1e-05", "inf", "nan"); nullopt when the encoding is not one float
std::optional<std::string> float_arg_g(const std::string& encoded);

// s without its ANSI escape sequences (ESC [ parameters letter); escaped: also their python-repr spelling, the text
// \x1b[ parameters letter (a repr the engine made, like ProgramInfo(name='E\x1b[90m_...'))
std::string strip_ansi(const std::string& s, bool escaped = false);

}  // namespace tg::viz
