// Loader for tests/data/uops_kernel_goldens.txt (written by tests/parity/gen_uops_kernel_goldens.py, which describes
// the format): the reference's test_uops.py programs, lowered and run there, and python's sorted() permutations.
#pragma once
#include <array>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/uop/serialize.h"
#include "tests/support/golden_file.h"

struct UopsRun {
  std::array<int64_t, 3> global{1, 1, 1}, local{1, 1, 1};
  std::vector<std::string> vals;
  std::vector<tg::test::GoldenBuffer> bufs;
};

struct UopsCase {
  std::string test;
  int k = 0;
  std::vector<tg::PyConst> operands;
  std::vector<std::string> program, sink, source, llvm_source;
  bool has_source = false, has_llvm_source = false;
  std::vector<UopsRun> runs;  // hand-built programs: the PYTHON device's runs
  std::vector<std::string> vals;
  std::array<int64_t, 3> global{1, 1, 1};
  std::optional<std::array<int64_t, 3>> local;  // written for devices with local sizes (CL)
  std::vector<tg::test::GoldenBuffer> bufs;
  bool is_linear = false;  // a to_uops_list record (no run)
};

struct PySortCase {
  std::string kind;
  std::vector<std::string> values;  // "nan" or a number
  std::vector<size_t> perm;         // sorted(range(n), key=values.__getitem__)
};

struct UopsGoldens {
  std::vector<UopsCase> cases;
  std::vector<PySortCase> pysorts;
};

inline UopsGoldens load_uops_goldens(const std::string& path) {
  tg::test::GoldenFile f(path);
  UopsGoldens g;
  while (f.next()) {
    std::vector<std::string> w = f.words();
    if (f.is("pysort")) {  // pysort <kind> <n> <values...>
      g.pysorts.push_back({w.at(1), std::vector<std::string>(w.begin() + 3, w.end()), {}});
      continue;
    }
    if (f.is("perm")) {
      if (g.pysorts.empty()) f.fail("perm before pysort");
      for (size_t i = 1; i < w.size(); i++) g.pysorts.back().perm.push_back(std::stoul(w[i]));
      continue;
    }
    if (f.is("case") || f.is("linear")) {  // case|linear <test> <k> [<operands, '|'-separated>]
      UopsCase c;
      c.is_linear = f.is("linear");
      c.test = w.at(1);
      c.k = std::stoi(w.at(2));
      if (w.size() > 3)
        for (const std::string& o : tg::test::split(w[3], '|')) c.operands.push_back(tg::decode_arg(o).as_const());
      g.cases.push_back(std::move(c));
      continue;
    }
    if (g.cases.empty()) f.fail("a record before the first case");
    UopsCase& c = g.cases.back();
    if (f.is("run")) {  // run <global x3> <local x3>
      if (w.size() != 7) f.fail("expected: run <global x3> <local x3>");
      c.runs.emplace_back();
      for (size_t i = 0; i < 3; i++) c.runs.back().global[i] = std::stoll(w[i + 1]);
      for (size_t i = 0; i < 3; i++) c.runs.back().local[i] = std::stoll(w[i + 4]);
    } else if (f.is("vals")) {
      (c.runs.empty() ? c.vals : c.runs.back().vals).assign(w.begin() + 1, w.end());
    } else if (f.is("global")) {
      for (size_t i = 0; i < 3; i++) c.global[i] = std::stoll(w.at(i + 1));
    } else if (f.is("local")) {
      c.local = std::array<int64_t, 3>{};
      for (size_t i = 0; i < 3; i++) (*c.local)[i] = std::stoll(w.at(i + 1));
    } else if (f.is("buf")) {
      if (w.size() != 5) f.fail("expected: buf <dtype> <count> <hex before> <hex after>");
      (c.runs.empty() ? c.bufs : c.runs.back().bufs)
          .push_back({w[1], std::stoull(w[2]), tg::test::unhex(w[3]), tg::test::unhex(w[4])});
    } else if (f.is("program")) {
      c.program = f.block();
    } else if (f.is("sink")) {
      c.sink = f.block();
    } else if (f.is("source")) {
      c.source = f.block();
      c.has_source = true;
    } else if (f.is("llvm_source")) {
      c.llvm_source = f.block();
      c.has_llvm_source = true;
    } else {
      f.unknown();
    }
  }
  return g;
}
