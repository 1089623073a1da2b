// Loader for tests/data/cpu_bench_kernels.txt (big kernels the reference lowered for DEV=CPU:LLVM with its default
// optimizations; gen_cpu_bench_kernels.py describes the format).
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/golden_file.h"

struct CPUBenchKernel {
  std::string label, name, info;
  std::array<int64_t, 3> global{1, 1, 1};
  std::vector<std::string> vals;  // "-" is core_id
  double ops = 0, lds = 0, mem = 0;
  std::vector<std::pair<std::string, size_t>> bufs;  // dtype attr, count
  std::string source;
};

inline std::vector<CPUBenchKernel> load_cpu_bench_kernels(const std::string& path) {
  tg::test::GoldenFile f(path);
  std::vector<CPUBenchKernel> ks;
  auto field = [](const std::string& line, const std::string& key) {
    size_t p = line.find(" " + key + "=");
    if (p == std::string::npos) return 0.0;
    return std::stod(line.substr(p + key.size() + 2));
  };
  while (f.next()) {
    std::vector<std::string> w = f.words();
    if (f.is("kernel")) {
      if (w.size() != 3) f.fail("expected: kernel <label> <name>");
      ks.push_back({.label = w[1], .name = w[2]});
      continue;
    }
    if (ks.empty()) f.fail("a record before the first kernel");
    CPUBenchKernel& k = ks.back();
    if (f.is("info")) {
      k.info = f.line();
    } else if (f.is("global")) {
      for (size_t i = 0; i < 3; i++) k.global[i] = std::stoll(w.at(i + 1));
    } else if (f.is("vals")) {
      k.vals.assign(w.begin() + 1, w.end());
    } else if (f.is("est")) {
      k.ops = field(f.line(), "ops");
      k.lds = field(f.line(), "lds");
      k.mem = field(f.line(), "mem");
    } else if (f.is("buf")) {
      k.bufs.emplace_back(w.at(1), std::stoull(w.at(2)));
    } else if (f.is("source")) {
      std::vector<std::string> lines = f.block();
      for (size_t i = 0; i < lines.size(); i++) k.source += (i ? "\n" : "") + lines[i];
    } else {
      f.unknown();
    }
  }
  return ks;
}

inline const CPUBenchKernel& find_cpu_bench_kernel(const std::vector<CPUBenchKernel>& ks, const std::string& label) {
  for (const auto& k : ks)
    if (k.label == label) return k;
  throw std::runtime_error("no bench kernel " + label);
}
