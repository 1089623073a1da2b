// Loader for tests/bench/index_corpus.txt (see gen_corpus.py): matcher name, input graph, the reference's output.
#pragma once
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/uop/serialize.h"

struct CorpusCase {
  std::string matcher;  // "symbolic" or "sym"
  std::vector<std::string> in, out;
};

inline std::vector<CorpusCase> load_corpus(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open corpus " + path);
  std::vector<CorpusCase> cases;
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("expr ", 0) != 0) continue;
    CorpusCase c;
    size_t a = line.find(' ', 5), b = line.find(' ', a + 1);
    c.matcher = line.substr(5, a - 5);
    int nin = std::stoi(line.substr(a + 1, b - a - 1)), nout = std::stoi(line.substr(b + 1));
    for (int i = 0; i < nin && std::getline(f, line); i++) c.in.push_back(line);
    for (int i = 0; i < nout && std::getline(f, line); i++) c.out.push_back(line);
    cases.push_back(std::move(c));
  }
  return cases;
}
