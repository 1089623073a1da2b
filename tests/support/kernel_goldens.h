// Loader for tests/data/kernel_goldens.txt (written by tests/parity/gen_kernel_goldens.py, which describes the format).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/golden_file.h"

struct KernelBlock {
  std::vector<std::string> sink, linear, program, source, cfg_in, cfg_out, split_in, split_out;
  std::array<int64_t, 3> global{1, 1, 1};
  std::string info;  // "info global=.. local=.. vars=.. globals=.. outs=.. ins=.."
  std::string est;   // "est ops=.. lds=.. mem=.."
};

using GoldenBuffer = tg::test::GoldenBuffer;

struct KernelGolden : tg::test::GoldenRun {
  int id = 0;
  std::string name, program;
  KernelBlock clang, llvm;
  // the reference's PYTHON device on the clang / llvm program: buffers after the run (empty when it could not run it)
  std::vector<std::vector<uint8_t>> emu_clang, emu_llvm;
};

inline std::vector<KernelGolden> load_kernel_goldens(const std::string& path) {
  tg::test::GoldenFile f(path);
  std::vector<KernelGolden> ks;
  KernelBlock* blk = nullptr;
  auto in_block = [&]() -> KernelBlock& {
    if (!blk) f.fail("'" + f.key() + "' outside a clang or llvm block");
    return *blk;
  };
  while (f.next()) {
    std::vector<std::string> w = f.words();
    if (f.is("kernel")) {
      ks.emplace_back();
      ks.back().id = std::stoi(w.at(1));
      ks.back().name = w.at(2);
      ks.back().program = w.size() > 3 ? w[3] : "";
      blk = nullptr;
      continue;
    }
    if (ks.empty()) f.fail("a record before the first kernel");
    KernelGolden& k = ks.back();
    if (f.is("clang") || f.is("llvm")) {
      blk = f.is("clang") ? &k.clang : &k.llvm;
    } else if (k.read_run(f)) {
      if (f.is("run")) blk = nullptr;
    } else if (f.is("info")) {
      in_block().info = f.line();
    } else if (f.is("est")) {
      in_block().est = f.line();
    } else if (f.is("global")) {
      for (size_t i = 0; i < 3; i++) in_block().global[i] = std::stoll(w.at(i + 1));
    } else if (f.is("emu")) {
      auto& dst = w.at(1) == "clang" ? k.emu_clang : k.emu_llvm;
      for (size_t i = 2; i < w.size(); i++) dst.push_back(tg::test::unhex(w[i]));
    } else {
      // a graph or source block; "same" repeats another one
      KernelBlock& b = in_block();
      const std::map<std::string, std::vector<std::string>*> blocks = {
          {"sink", &b.sink},     {"linear", &b.linear},   {"program", &b.program},         {"source", &b.source},
          {"cfg_in", &b.cfg_in}, {"cfg_out", &b.cfg_out}, {"split_ends_in", &b.split_in}, {"split_ends_out", &b.split_out}};
      auto it = blocks.find(f.key());
      if (it == blocks.end()) f.unknown();
      if (f.rest() != "same")
        *it->second = f.block();
      else if (f.is("sink"))
        *it->second = k.clang.sink;
      else if (f.is("linear"))
        *it->second = k.clang.linear;
      else if (f.is("program"))
        *it->second = b.linear;
      else if (f.is("cfg_in") || f.is("cfg_out"))
        *it->second = b.sink;
      else
        f.fail("'" + f.key() + " same' is not defined");
    }
  }
  return ks;
}
