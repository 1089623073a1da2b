#include "viz/reader/argfmt.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "lib/pyfmt.h"

namespace tg::viz {

namespace {
// A strict reader of the encoding: an arg comes from a file, so every length is checked against the text, nesting
// is bounded (the recursion goes at most kMaxArgNesting deep) and anything the encoder does not write is an error.
struct P {
  const std::string& s;
  size_t i = 0;
  int depth = 0;
  [[noreturn]] void fail(const std::string& what) const {
    std::string shown;
    for (size_t k = 0; k < s.size() && k < 60; k++)
      shown += (unsigned char)s[k] >= 32 && s[k] != 127 ? std::string(1, s[k]) : "\\x" + std::string(1, "0123456789abcdef"[(unsigned char)s[k] >> 4]) + "0123456789abcdef"[s[k] & 15];
    if (s.size() > 60) shown += "...";
    throw ArgFormatError(what + " at offset " + std::to_string(i) + " of '" + shown + "' (" +
                         std::to_string(s.size()) + " bytes)");
  }
  char peek() const { return i < s.size() ? s[i] : '\0'; }
  void expect(char c, const char* what) {
    if (peek() != c) fail(std::string("expected '") + c + "' " + what);
    i++;
  }
  std::string word() {
    size_t st = i;
    while (i < s.size() && (isalnum((unsigned char)s[i]) || s[i] == '_')) i++;
    if (st == i) fail("expected a name");
    std::string w = s.substr(st, i - st);
    if (peek() == ' ') i++;
    return w;
  }
  // comma-separated items up to the closing ')' (the '(' is read)
  std::vector<std::string> items() {
    std::vector<std::string> out;
    if (peek() == ')') {
      i++;
      return out;
    }
    for (;;) {
      out.push_back(item());
      if (peek() == ',') i++;
      if (peek() == ')') {
        i++;
        return out;
      }
      if (i >= s.size()) fail("unterminated tuple");
      if (s[i - 1] != ',') fail("expected ',' or ')'");
    }
  }
  // a struct's fields: exactly n of them
  std::vector<std::string> fields(const char* what, size_t n) {
    expect('(', what);
    std::vector<std::string> f = items();
    if (f.size() != n)
      fail(std::string(what) + " with " + std::to_string(f.size()) + " fields, not " + std::to_string(n));
    return f;
  }
  std::string item() {
    if (i >= s.size()) fail("unexpected end");
    if (depth >= kMaxArgNesting) fail("nested deeper than " + std::to_string(kMaxArgNesting) + " levels");
    depth++;
    std::string r = item_at(s[i++]);
    depth--;
    return r;
  }
  std::string item_at(char c) {
    switch (c) {
      case 'N': return "None";
      case 'I': return "Invalid";
      case 'T': return "True";
      case 'F': return "False";
      case 'i': {
        size_t st = i;
        if (peek() == '-') i++;
        size_t digits = i;
        while (i < s.size() && isdigit((unsigned char)s[i])) i++;
        if (i == digits) fail("an int without digits");
        return s.substr(st, i - st);
      }
      case 'f': {
        if (i + 16 > s.size()) fail("a float shorter than 16 hex digits");
        uint64_t bits = 0;
        for (size_t k = i; k < i + 16; k++) {
          char h = s[k];
          int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
          if (v < 0) fail("a float with a non-hex digit");
          bits = bits << 4 | (uint64_t)v;
        }
        i += 16;
        double d;
        std::memcpy(&d, &bits, 8);
        return py_float_repr(d);
      }
      case 's': case 'R': {
        // <len>:<bytes>: the length is checked against what is left (a huge one must not wrap the position)
        size_t n = 0, st = i;
        while (i < s.size() && isdigit((unsigned char)s[i])) {
          if (n > s.size()) fail("a string length longer than the arg");
          n = n * 10 + (size_t)(s[i++] - '0');
        }
        if (i == st) fail("a string without a length");
        expect(':', "after a string length");
        if (n > s.size() - i) fail("a string length of " + std::to_string(n) + " past the end of the arg");
        std::string v = s.substr(i, n);
        i += n;
        return c == 's' ? py_str_repr(strip_ansi(v)) : strip_ansi(v, true);
      }
      case 'd': return "dtypes." + word();
      case 'o': return "Ops." + word();
      case 'a': return "AxisType." + word();
      case 'A': return "AddrSpace." + word();
      case '(': {
        std::vector<std::string> it = items();
        std::string r = "(";
        for (size_t k = 0; k < it.size(); k++) r += (k ? ", " : "") + it[k];
        return r + (it.size() == 1 ? ",)" : ")");
      }
      case 'P': {
        std::vector<std::string> f = fields("ParamArg", 9);
        static const char* names[] = {nullptr, nullptr, "vmin_vmax", "multiple_of", "name", "addrspace", "axis", "device", "volatile"};
        static const char* defaults[] = {nullptr, nullptr, "None", "None", "None", "AddrSpace.GLOBAL", "None", "None", "False"};
        std::string r = "ParamArg(" + f[0] + ", " + f[1];
        for (int k = 2; k < 9; k++)
          if (f[k] != defaults[k]) r += std::string(", ") + names[k] + "=" + f[k];
        return r + ")";
      }
      case 'K': {
        std::vector<std::string> f = fields("KernelInfo", 7);
        return "KernelInfo(name=" + f[0] + ", axis_types=" + f[1] + ", dont_use_locals=" + f[2] + ", applied_opts=" +
               f[3] + ", opts_to_apply=" + f[4] + ", estimates=" + f[5] + ", beam=" + f[6] + ")";
      }
      case 'C': {
        std::vector<std::string> f = fields("CallInfo", 3);
        return "CallInfo(None, " + f[0] + ", " + f[1] + ", " + f[2] + ")";
      }
      case 'B': {
        std::vector<std::string> f = fields("BufferizeOpts", 3);
        return "BufferizeOpts(device=" + f[0] + ", addrspace=" + f[1] + ", removable=" + f[2] + ")";
      }
      default: {
        i--;
        fail(c >= 32 && c < 127 ? std::string("unknown tag '") + c + "'" : "unknown tag byte " + std::to_string((unsigned char)c));
      }
    }
  }
};
}  // namespace

std::string strip_ansi(const std::string& s, bool escaped) {
  static const std::string text = "\\x1b[";
  if (s.find('\x1b') == std::string::npos && (!escaped || s.find(text) == std::string::npos)) return s;
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    size_t skip = s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[' ? 2
                  : escaped && s.compare(i, text.size(), text) == 0   ? text.size()
                                                                      : 0;
    if (skip) {
      i += skip;
      while (i < s.size() && !((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z'))) i++;
      continue;
    }
    out += s[i];
  }
  return out;
}

std::optional<std::string> float_arg_g(const std::string& encoded) {
  if (encoded.size() != 17 || encoded[0] != 'f') return std::nullopt;
  (void)arg_display(encoded);  // validates the hex digits
  uint64_t bits = std::stoull(encoded.substr(1), nullptr, 16);
  double d;
  std::memcpy(&d, &bits, 8);
  if (std::isnan(d)) return "nan";  // C's %g may say "-nan"; python says "nan"
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", d);
  return std::string(buf);
}

std::string arg_display(const std::string& encoded) {
  P p{encoded};
  std::string r = p.item();
  if (p.i != encoded.size()) p.fail("trailing bytes");
  return r;
}

}  // namespace tg::viz
