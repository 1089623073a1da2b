// Loader for tests/data/tensor_goldens.txt, tensor_goldens_clang.txt and tensor_goldens_cl.txt (written by tests/parity/gen_tensor_goldens.py,
// which describes the format).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "tests/support/golden_file.h"

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
  std::vector<std::string> sources;                          // the rendered source of each PROGRAM (when written)
  std::vector<TensorGoldenOut> outs;
};

inline std::vector<TensorGolden> load_tensor_goldens(const std::string& path) {
  tg::test::GoldenFile f(path);
  std::vector<TensorGolden> cases;
  while (f.next()) {
    const std::string& rest = f.rest();
    if (f.is("case")) {
      cases.emplace_back();
      cases.back().name = rest;
      continue;
    }
    if (cases.empty()) f.fail("a record before the first case");
    TensorGolden& c = cases.back();
    if (f.is("error")) {
      c.error = rest;
    } else if (f.is("callify")) {
      c.callify = f.block();
    } else if (f.is("linear")) {
      c.linear = f.block();
    } else if (f.is("varvals")) {
      c.var_vals = tg::test::key_values(rest);
    } else if (f.is("inputs")) {  // + n lines "<toposort index> <hex bytes>"
      for (const std::string& l : f.block()) {
        size_t sp = l.find(' ');
        c.inputs.emplace_back(std::stoi(l.substr(0, sp)), sp == std::string::npos ? "" : l.substr(sp + 1));
      }
    } else if (f.is("kernels")) {  // + n lines "<name>|<op sequence>"
      for (const std::string& l : f.block()) {
        size_t bar = l.find('|');
        c.kernels.emplace_back(l.substr(0, bar), l.substr(bar + 1));
      }
    } else if (f.is("sources")) {  // + n lines, each a source with \\ and newlines escaped
      for (const std::string& l : f.block()) {
        std::string src;
        for (size_t i = 0; i < l.size(); i++) {
          if (l[i] == '\\' && i + 1 < l.size()) {
            src += l[i + 1] == 'n' ? '\n' : l[i + 1];
            i++;
          } else {
            src += l[i];
          }
        }
        c.sources.push_back(src);
      }
    } else if (f.is("out")) {  // out <index> <dtype> <shape, comma separated; empty for 0-d> <values...>
      size_t a = rest.find(' '), b = rest.find(' ', a + 1), d = rest.find(' ', b + 1);
      if (d == std::string::npos) f.fail("expected: out <index> <dtype> <shape> <values>");
      TensorGoldenOut o;
      o.index = std::stoi(rest.substr(0, a));
      o.dtype = rest.substr(a + 1, b - a - 1);
      for (const std::string& dim : tg::test::split(rest.substr(b + 1, d - b - 1), ',')) o.shape.push_back(std::stoll(dim));
      o.values = tg::test::split(rest.substr(d + 1));
      c.outs.push_back(o);
    } else if (!f.is("outs")) {
      f.unknown();
    }
  }
  return cases;
}
