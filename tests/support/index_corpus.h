// Loader for tests/data/index_corpus.txt (tests/bench/gen_corpus.py): per expression the matcher it is rewritten with,
// its input graph and the reference's output ("expr <matcher> <n in> <n out>" + the two graphs' lines).
#pragma once
#include <string>
#include <vector>

#include "tests/support/golden_file.h"

struct CorpusCase {
  std::string matcher;  // "symbolic" or "sym"
  std::vector<std::string> in, out;
};

inline std::vector<CorpusCase> load_corpus(const std::string& path) {
  tg::test::GoldenFile f(path);
  std::vector<CorpusCase> cases;
  while (f.next()) {
    if (!f.is("expr")) continue;
    std::vector<std::string> w = f.words();
    if (w.size() != 4) f.fail("expected: expr <matcher> <n in> <n out>");
    CorpusCase c{w[1], f.lines(std::stoul(w[2])), {}};
    c.out = f.lines(std::stoul(w[3]));
    cases.push_back(std::move(c));
  }
  return cases;
}
