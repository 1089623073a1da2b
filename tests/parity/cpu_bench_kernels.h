// Loader for tests/parity/cpu_bench_kernels.txt (big kernels the reference lowered for DEV=CPU:LLVM with its default
// optimizations; gen_cpu_bench_kernels.py describes the format).
#pragma once
#include <array>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

struct CPUBenchKernel {
  std::string label, name, info;
  std::array<int64_t, 3> global{1, 1, 1};
  std::vector<std::string> vals;  // "-" is core_id
  double ops = 0, lds = 0, mem = 0;
  std::vector<std::pair<std::string, size_t>> bufs;  // dtype attr, count
  std::string source;
};

inline std::vector<CPUBenchKernel> load_cpu_bench_kernels(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::vector<CPUBenchKernel> ks;
  std::string line;
  auto words = [](const std::string& s) {
    std::vector<std::string> w;
    size_t i = 0;
    while (i < s.size()) {
      size_t j = s.find(' ', i);
      if (j == std::string::npos) j = s.size();
      w.push_back(s.substr(i, j - i));
      i = j + 1;
    }
    return w;
  };
  auto field = [](const std::string& line, const std::string& key) {
    size_t p = line.find(" " + key + "=");
    if (p == std::string::npos) return 0.0;
    return std::stod(line.substr(p + key.size() + 2));
  };
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto w = words(line);
    if (w[0] == "kernel") {
      ks.emplace_back();
      ks.back().label = w[1];
      ks.back().name = w[2];
      continue;
    }
    CPUBenchKernel& k = ks.back();
    if (w[0] == "info") {
      k.info = line;
    } else if (w[0] == "global") {
      for (size_t i = 0; i < 3; i++) k.global[i] = std::stoll(w[i + 1]);
    } else if (w[0] == "vals") {
      k.vals.assign(w.begin() + 1, w.end());
    } else if (w[0] == "est") {
      k.ops = field(line, "ops");
      k.lds = field(line, "lds");
      k.mem = field(line, "mem");
    } else if (w[0] == "buf") {
      k.bufs.emplace_back(w[1], std::stoull(w[2]));
    } else if (w[0] == "source") {
      int n = std::stoi(w[1]);
      for (int i = 0; i < n && std::getline(f, line); i++) k.source += (i ? "\n" : "") + line;
    } else {
      throw std::runtime_error("bad line in " + path + ": " + line.substr(0, 80));
    }
  }
  return ks;
}

inline const CPUBenchKernel& find_cpu_bench_kernel(const std::vector<CPUBenchKernel>& ks, const std::string& label) {
  for (const auto& k : ks)
    if (k.label == label) return k;
  throw std::runtime_error("no bench kernel " + label);
}
