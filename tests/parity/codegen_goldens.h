// Loader for tests/parity/codegen_goldens.txt (written by gen_codegen_goldens.py; the format is described there).
// Graphs are decoded into a per-kernel node pool while loading; a pass's graph is its pool index.
#pragma once
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "lib/uop/serialize.h"

struct CgPass {
  std::string name;
  tg::UOp graph;
};

struct CgVariant {
  std::string kind;   // clang, llvm, noopt, local
  std::string error;  // the reference raised this
  std::string name, fname;
  std::vector<std::string> opts, steps, source;
  std::vector<CgPass> passes;
  tg::UOp program;  // LINEAR
  std::string info;
  bool emu_failed = false;
  std::vector<std::string> emu;  // per buffer: "=" run's result, "<" unchanged input, else hex
};

struct CgBuffer {
  std::string dtype;
  size_t count = 0;
  std::vector<uint8_t> before, after;
};

struct CgKernel {
  int id = 0;
  std::string program;
  tg::UOp ast;
  std::vector<CgVariant> variants;
  bool has_run = false;
  std::vector<std::string> vals;
  std::vector<CgBuffer> bufs;
  const CgVariant* variant(const std::string& kind) const {
    for (const auto& v : variants)
      if (v.kind == kind) return &v;
    return nullptr;
  }
};

inline std::vector<uint8_t> cg_unhex(const std::string& h) {
  std::vector<uint8_t> r;
  if (h == "-") return r;
  for (size_t i = 0; i + 1 < h.size(); i += 2) r.push_back((uint8_t)std::stoi(h.substr(i, 2), nullptr, 16));
  return r;
}

inline std::vector<CgKernel> load_codegen_goldens(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open golden file " + path);
  std::vector<CgKernel> ks;
  std::vector<tg::UOp> pool;
  std::string line;
  auto ref = [&](const std::string& w) -> tg::UOp {
    if (w.empty() || w[0] != '@') throw std::runtime_error("bad graph reference " + w);
    return pool.at(std::stoul(w.substr(1)));
  };
  auto read_lines = [&](int n) {
    std::vector<std::string> r;
    for (int i = 0; i < n && std::getline(f, line); i++) r.push_back(line);
    return r;
  };
  CgVariant* v = nullptr;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') {
      if (v && line.rfind("# emu failed", 0) == 0) v->emu_failed = true;
      continue;
    }
    if (line.rfind("+ ", 0) == 0) {
      pool.push_back(tg::decode_node(line.substr(2), pool));
      continue;
    }
    size_t sp = line.find(' ');
    std::string key = line.substr(0, sp), rest = sp == std::string::npos ? "" : line.substr(sp + 1);
    if (key == "kernel") {
      pool.clear();
      ks.emplace_back();
      size_t sp2 = rest.find(' ');
      ks.back().id = std::stoi(rest.substr(0, sp2));
      ks.back().program = rest.substr(sp2 + 1);
      v = nullptr;
      continue;
    }
    CgKernel& k = ks.back();
    if (key == "ast")
      k.ast = ref(rest);
    else if (key == "variant") {
      k.variants.emplace_back();
      v = &k.variants.back();
      v->kind = rest;
    } else if (key == "error")
      v->error = rest;
    else if (key == "name") {
      std::string s;
      for (size_t i = 0; i < rest.size(); i++) {
        if (rest.compare(i, 4, "\\x1b") == 0)
          s += '\x1b', i += 3;
        else
          s += rest[i];
      }
      v->name = s;
    } else if (key == "fname")
      v->fname = rest;
    else if (key == "opts")
      v->opts = read_lines(std::stoi(rest));
    else if (key == "steps") {
      if (rest == "=clang")
        v->steps = k.variants.at(0).steps;
      else
        v->steps = read_lines(std::stoi(rest));
    } else if (key == "pass") {
      // pass <i> <name...> @j
      size_t a = rest.find(' '), b = rest.rfind(' ');
      v->passes.push_back({rest.substr(a + 1, b - a - 1), ref(rest.substr(b + 1))});
    } else if (key == "program")
      v->program = ref(rest);
    else if (key == "source")
      v->source = read_lines(std::stoi(rest));
    else if (key == "info")
      v->info = line;
    else if (key == "emu") {
      size_t i = 0;
      while (i < rest.size()) {
        size_t j = rest.find(' ', i);
        if (j == std::string::npos) j = rest.size();
        v->emu.push_back(rest.substr(i, j - i));
        i = j + 1;
      }
    } else if (key == "run") {
      k.has_run = true;
      v = nullptr;
    } else if (key == "vals") {
      size_t i = 0;
      while (i < rest.size()) {
        size_t j = rest.find(' ', i);
        if (j == std::string::npos) j = rest.size();
        k.vals.push_back(rest.substr(i, j - i));
        i = j + 1;
      }
    } else if (key == "buf") {
      // buf <dtype> <count> <hex before> <hex after>
      size_t a = rest.find(' '), b = rest.find(' ', a + 1), c = rest.find(' ', b + 1);
      CgBuffer buf;
      buf.dtype = rest.substr(0, a);
      buf.count = std::stoull(rest.substr(a + 1, b - a - 1));
      buf.before = cg_unhex(rest.substr(b + 1, c - b - 1));
      buf.after = cg_unhex(rest.substr(c + 1));
      k.bufs.push_back(std::move(buf));
    } else {
      throw std::runtime_error("bad golden line: " + line.substr(0, 80));
    }
  }
  return ks;
}
