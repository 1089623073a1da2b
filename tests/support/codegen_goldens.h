// Loader for tests/data/codegen_goldens.txt (written by tests/parity/gen_codegen_goldens.py, which describes the
// format). Graphs are decoded into a per-kernel node pool while loading; a pass's graph is its pool node.
#pragma once
#include <string>
#include <vector>

#include "tests/support/golden_file.h"

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

struct CgKernel : tg::test::GoldenRun {
  int id = 0;
  std::string program;
  tg::UOp ast;
  std::vector<CgVariant> variants;
  const CgVariant* variant(const std::string& kind) const {
    for (const auto& v : variants)
      if (v.kind == kind) return &v;
    return nullptr;
  }
};

inline std::vector<CgKernel> load_codegen_goldens(const std::string& path) {
  tg::test::GoldenFile f(path, tg::test::GoldenFile::kNodePool);
  std::vector<CgKernel> ks;
  CgVariant* v = nullptr;
  f.on_comment = [&](const std::string& line) {
    if (v && line.rfind("# emu failed", 0) == 0) v->emu_failed = true;
  };
  auto variant = [&]() -> CgVariant& {
    if (!v) f.fail("'" + f.key() + "' outside a variant");
    return *v;
  };
  while (f.next()) {
    const std::string& rest = f.rest();
    if (f.is("kernel")) {
      f.clear_pool();
      ks.emplace_back();
      size_t sp = rest.find(' ');
      ks.back().id = std::stoi(rest.substr(0, sp));
      ks.back().program = rest.substr(sp + 1);
      v = nullptr;
      continue;
    }
    if (ks.empty()) f.fail("a record before the first kernel");
    CgKernel& k = ks.back();
    if (f.is("ast")) {
      k.ast = f.node(rest);
    } else if (f.is("variant")) {
      k.variants.emplace_back();
      v = &k.variants.back();
      v->kind = rest;
    } else if (k.read_run(f)) {
      if (f.is("run")) v = nullptr;
    } else if (f.is("error")) {
      variant().error = rest;
    } else if (f.is("name")) {
      std::string s;  // ANSI escapes are written as \x1b
      for (size_t i = 0; i < rest.size(); i++) {
        if (rest.compare(i, 4, "\\x1b") == 0)
          s += '\x1b', i += 3;
        else
          s += rest[i];
      }
      variant().name = s;
    } else if (f.is("fname")) {
      variant().fname = rest;
    } else if (f.is("opts")) {
      variant().opts = f.block();
    } else if (f.is("steps")) {
      variant().steps = rest == "=clang" ? k.variants.at(0).steps : f.block();
    } else if (f.is("pass")) {  // pass <i> <name...> @j
      size_t a = rest.find(' '), b = rest.rfind(' ');
      variant().passes.push_back({rest.substr(a + 1, b - a - 1), f.node(rest.substr(b + 1))});
    } else if (f.is("program")) {
      variant().program = f.node(rest);
    } else if (f.is("source")) {
      variant().source = f.block();
    } else if (f.is("info")) {
      variant().info = f.line();
    } else if (f.is("emu")) {
      variant().emu = tg::test::split(rest);
    } else {
      f.unknown();
    }
  }
  return ks;
}
