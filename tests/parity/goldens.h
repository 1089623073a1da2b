// Loader for the golden files in tests/parity (written by the gen_*.py scripts run against the reference).
#pragma once
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

struct SymbolicCase {
  std::string name;
  int index = 0;
  std::string expect_vmin, expect_vmax, expect_str, render, vmin, vmax;
  std::vector<std::string> in, out;
};

inline std::vector<SymbolicCase> load_symbolic_goldens(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open golden file " + path);
  std::vector<SymbolicCase> cases;
  std::string line;
  auto rest = [&](const std::string& key) { return line.substr(key.size() + 1); };
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("case ", 0) == 0) {
      cases.emplace_back();
      size_t sp = line.rfind(' ');
      cases.back().name = line.substr(5, sp - 5);
      cases.back().index = std::stoi(line.substr(sp + 1));
      continue;
    }
    SymbolicCase& c = cases.back();
    if (line.rfind("expect_vmin ", 0) == 0) c.expect_vmin = rest("expect_vmin");
    else if (line.rfind("expect_vmax ", 0) == 0) c.expect_vmax = rest("expect_vmax");
    else if (line.rfind("expect_str ", 0) == 0) c.expect_str = rest("expect_str");
    else if (line.rfind("render ", 0) == 0) c.render = rest("render");
    else if (line.rfind("vmin ", 0) == 0) c.vmin = rest("vmin");
    else if (line.rfind("vmax ", 0) == 0) c.vmax = rest("vmax");
    else if (line.rfind("in ", 0) == 0 || line.rfind("out ", 0) == 0) {
      bool is_in = line[0] == 'i';
      int n = std::stoi(line.substr(is_in ? 3 : 4));
      auto& dst = is_in ? c.in : c.out;
      for (int i = 0; i < n && std::getline(f, line); i++) dst.push_back(line);
    }
  }
  return cases;
}
