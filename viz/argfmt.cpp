#include "viz/argfmt.h"

#include <cstring>
#include <vector>

#include "lib/pyfmt.h"

namespace tg::viz {

namespace {
struct P {
  const std::string& s;
  size_t i = 0;
  char peek() const { return i < s.size() ? s[i] : '\0'; }
  std::string word() {
    size_t st = i;
    while (i < s.size() && (isalnum((unsigned char)s[i]) || s[i] == '_')) i++;
    std::string w = s.substr(st, i - st);
    if (peek() == ' ') i++;
    return w;
  }
  std::string item() {
    if (i >= s.size()) return "?";
    char c = s[i++];
    switch (c) {
      case 'N': return "None";
      case 'I': return "Invalid";
      case 'T': return "True";
      case 'F': return "False";
      case 'i': {
        size_t st = i;
        if (peek() == '-') i++;
        while (i < s.size() && isdigit((unsigned char)s[i])) i++;
        return s.substr(st, i - st);
      }
      case 'f': {
        if (i + 16 > s.size()) return "?";
        uint64_t bits = std::stoull(s.substr(i, 16), nullptr, 16);
        i += 16;
        double d;
        std::memcpy(&d, &bits, 8);
        return py_float_repr(d);
      }
      case 's': case 'R': {
        size_t colon = s.find(':', i);
        if (colon == std::string::npos) return "?";
        size_t n = std::stoull(s.substr(i, colon - i));
        std::string v = s.substr(colon + 1, n);
        i = colon + 1 + n;
        return c == 's' ? py_str_repr(v) : v;
      }
      case 'd': return "dtypes." + word();
      case 'o': return "Ops." + word();
      case 'a': return "AxisType." + word();
      case 'A': return "AddrSpace." + word();
      case '(': {
        std::vector<std::string> items;
        while (i < s.size() && peek() != ')') {
          items.push_back(item());
          if (peek() == ',') i++;
        }
        i++;
        std::string r = "(";
        for (size_t k = 0; k < items.size(); k++) r += (k ? ", " : "") + items[k];
        return r + (items.size() == 1 ? ",)" : ")");
      }
      case 'P': {
        i++;  // '('
        std::vector<std::string> f;
        while (i < s.size() && peek() != ')') {
          f.push_back(item());
          if (peek() == ',') i++;
        }
        i++;
        if (f.size() < 9) return "ParamArg(?)";
        static const char* names[] = {nullptr, nullptr, "vmin_vmax", "multiple_of", "name", "addrspace", "axis", "device", "volatile"};
        static const char* defaults[] = {nullptr, nullptr, "None", "None", "None", "AddrSpace.GLOBAL", "None", "None", "False"};
        std::string r = "ParamArg(" + f[0] + ", " + f[1];
        for (int k = 2; k < 9; k++)
          if (f[k] != defaults[k]) r += std::string(", ") + names[k] + "=" + f[k];
        return r + ")";
      }
      default: return "?";
    }
  }
};
}  // namespace

std::string arg_display(const std::string& encoded) {
  P p{encoded};
  return p.item();
}

}  // namespace tg::viz
