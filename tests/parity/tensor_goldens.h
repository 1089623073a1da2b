// Loader for tests/parity/tensor_goldens.txt (written by gen_tensor_goldens.py against the reference).
#pragma once
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

struct TensorGoldenOut {
  int index = -1;  // the output's BUFFER in the LINEAR's toposort
  std::string dtype;
  std::vector<long long> shape;
  std::vector<std::string> values;  // ints, 1/0 for bools, 16 hex digits (double bits) for floats
};

struct TensorGolden {
  std::string name, error;
  std::vector<std::string> callify, linear;
  std::vector<std::pair<std::string, long long>> var_vals;
  std::vector<std::pair<int, std::string>> inputs;           // (toposort index, hex bytes)
  std::vector<std::pair<std::string, std::string>> kernels;  // (name, op sequence)
  std::vector<TensorGoldenOut> outs;
};

inline std::vector<TensorGolden> load_tensor_goldens(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open golden file " + path);
  std::vector<TensorGolden> cases;
  std::string line;
  auto count = [&](const std::string& key) { return std::stoi(line.substr(key.size() + 1)); };
  auto read_lines = [&](int n, std::vector<std::string>& dst) {
    for (int i = 0; i < n && std::getline(f, line); i++) dst.push_back(line);
  };
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("case ", 0) == 0) {
      cases.emplace_back();
      cases.back().name = line.substr(5);
      continue;
    }
    TensorGolden& c = cases.back();
    if (line.rfind("error ", 0) == 0)
      c.error = line.substr(6);
    else if (line.rfind("callify ", 0) == 0)
      read_lines(count("callify"), c.callify);
    else if (line.rfind("linear ", 0) == 0)
      read_lines(count("linear"), c.linear);
    else if (line.rfind("varvals", 0) == 0) {
      std::istringstream in(line.substr(7));
      for (std::string kv; in >> kv;) {
        size_t eq = kv.find('=');
        c.var_vals.emplace_back(kv.substr(0, eq), std::stoll(kv.substr(eq + 1)));
      }
    } else if (line.rfind("inputs ", 0) == 0) {
      int n = count("inputs");
      for (int i = 0; i < n && std::getline(f, line); i++) {
        size_t sp = line.find(' ');
        c.inputs.emplace_back(std::stoi(line.substr(0, sp)), sp == std::string::npos ? "" : line.substr(sp + 1));
      }
    } else if (line.rfind("kernels ", 0) == 0) {
      int n = count("kernels");
      for (int i = 0; i < n && std::getline(f, line); i++) {
        size_t bar = line.find('|');
        c.kernels.emplace_back(line.substr(0, bar), line.substr(bar + 1));
      }
    } else if (line.rfind("out ", 0) == 0) {
      std::istringstream in(line.substr(4));
      TensorGoldenOut o;
      std::string shape;
      in >> o.index >> o.dtype;
      // the shape may be empty (a 0-d tensor): "out 16 float  c004..."
      std::string rest;
      std::getline(in, rest);
      if (rest.size() >= 2 && rest[0] == ' ' && rest[1] == ' ')
        rest = rest.substr(2);
      else if (!rest.empty() && rest[0] == ' ') {
        size_t sp = rest.find(' ', 1);
        shape = rest.substr(1, sp == std::string::npos ? std::string::npos : sp - 1);
        rest = sp == std::string::npos ? "" : rest.substr(sp + 1);
        std::istringstream sh(shape);
        for (std::string d; std::getline(sh, d, ',');) o.shape.push_back(std::stoll(d));
      }
      std::istringstream vs(rest);
      for (std::string v; vs >> v;) o.values.push_back(v);
      c.outs.push_back(o);
    }
  }
  return cases;
}
