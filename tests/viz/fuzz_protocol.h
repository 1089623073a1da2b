// The line protocol between trace_fuzz and its workers (tests/viz/trace_fuzz.cpp, gui/tests/fuzz_gui.cpp): one
// record per line, fields separated by tabs; a field escapes its newlines, tabs and backslashes.
#pragma once
#include <string>

namespace fuzz {

inline std::string escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '\n') r += "\\n";
    else if (c == '\t') r += "\\t";
    else if (c == '\\') r += "\\\\";
    else r += c;
  }
  return r;
}

inline std::string unescape(const std::string& s) {
  std::string r;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char c = s[++i];
      r += c == 'n' ? '\n' : c == 't' ? '\t' : c;
    } else {
      r += s[i];
    }
  }
  return r;
}

}  // namespace fuzz
