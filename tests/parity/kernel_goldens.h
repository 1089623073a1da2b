// Loader for tests/parity/kernel_goldens.txt (written by gen_kernel_goldens.py; the format is described there).
#pragma once
#include <array>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

struct KernelBlock {
  std::vector<std::string> sink, linear, program, source, cfg_in, cfg_out, split_in, split_out;
  std::array<int64_t, 3> global{1, 1, 1};
  std::string info;  // "info global=.. local=.. vars=.. globals=.. outs=.. ins=.."
  std::string est;   // "est ops=.. lds=.. mem=.."
};

struct GoldenBuffer {
  std::string dtype;  // dtypes.<attr>
  size_t count = 0;
  std::vector<uint8_t> before, after;
};

struct KernelGolden {
  int id = 0;
  std::string name, program;
  KernelBlock clang, llvm;
  bool has_run = false;
  std::vector<std::string> vals;  // "-" is core_id
  std::vector<GoldenBuffer> bufs;
  // the reference's PYTHON device on the clang / llvm program: buffers after the run (empty when it could not run it)
  std::vector<std::vector<uint8_t>> emu_clang, emu_llvm;
};

inline std::vector<uint8_t> golden_unhex(const std::string& h) {
  std::vector<uint8_t> r;
  if (h == "-") return r;
  for (size_t i = 0; i + 1 < h.size(); i += 2) r.push_back((uint8_t)std::stoi(h.substr(i, 2), nullptr, 16));
  return r;
}

inline std::vector<KernelGolden> load_kernel_goldens(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open golden file " + path);
  std::vector<KernelGolden> ks;
  std::string line;
  KernelBlock* blk = nullptr;
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
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> w = words(line);
    const std::string& key = w[0];
    if (key == "kernel") {
      ks.emplace_back();
      ks.back().id = std::stoi(w[1]);
      ks.back().name = w[2];
      ks.back().program = w.size() > 3 ? w[3] : "";
      blk = nullptr;
      continue;
    }
    KernelGolden& k = ks.back();
    if (key == "clang")
      blk = &k.clang;
    else if (key == "llvm")
      blk = &k.llvm;
    else if (key == "info")
      blk->info = line;
    else if (key == "est")
      blk->est = line;
    else if (key == "global") {
      for (int i = 0; i < 3; i++) blk->global[(size_t)i] = std::stoll(w[(size_t)i + 1]);
    } else if (key == "run") {
      k.has_run = true;
      blk = nullptr;
    } else if (key == "vals") {
      k.vals.assign(w.begin() + 1, w.end());
    } else if (key == "emu") {
      auto& dst = w[1] == "clang" ? k.emu_clang : k.emu_llvm;
      for (size_t i = 2; i < w.size(); i++) dst.push_back(golden_unhex(w[i]));
    } else if (key == "buf") {
      GoldenBuffer b;
      b.dtype = w[1];
      b.count = std::stoull(w[2]);
      b.before = golden_unhex(w[3]);
      b.after = golden_unhex(w[4]);
      k.bufs.push_back(std::move(b));
    } else {
      std::vector<std::string>* dst = nullptr;
      if (key == "sink")
        dst = &blk->sink;
      else if (key == "linear")
        dst = &blk->linear;
      else if (key == "program")
        dst = &blk->program;
      else if (key == "source")
        dst = &blk->source;
      else if (key == "cfg_in")
        dst = &blk->cfg_in;
      else if (key == "cfg_out")
        dst = &blk->cfg_out;
      else if (key == "split_ends_in")
        dst = &blk->split_in;
      else if (key == "split_ends_out")
        dst = &blk->split_out;
      else
        throw std::runtime_error("bad golden line: " + line.substr(0, 80));
      if (w[1] == "same") {
        if (key == "sink")
          *dst = k.clang.sink;
        else if (key == "linear")
          *dst = k.clang.linear;
        else if (key == "program")
          *dst = blk->linear;
        else if (key == "cfg_in" || key == "cfg_out")
          *dst = blk->sink;
        continue;
      }
      int n = std::stoi(w[1]);
      for (int i = 0; i < n && std::getline(f, line); i++) dst->push_back(line);
    }
  }
  return ks;
}
