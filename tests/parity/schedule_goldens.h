// Loader for tests/parity/schedule_goldens.txt (written by gen_schedule_goldens.py; the format is described there).
#pragma once
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lib/helpers.h"
#include "lib/uop/serialize.h"

struct SchedCase {
  int id = 0;
  std::string prog;
  int nth = 0;
  tg::UOp big_sink;
  std::string error, context;
  std::vector<tg::UOp> kernel_graphs;
  tg::UOp linear_unplanned, linear;
  std::vector<std::pair<std::string, long long>> vars;
  std::vector<std::string> steps;
  std::vector<std::pair<std::string, long long>> ctx;  // the scheduler's ContextVars when it ran
  std::vector<std::pair<int, tg::UOp>> step_outs;      // (step index, the graph it returned)
  std::vector<std::string> rangeify_debug;             // run_rangeify's DEBUG_RANGEIFY=1 lines (ESC as \x1b)
};

inline std::vector<SchedCase> load_schedule_goldens(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open golden file " + path);
  // the graphs are the reference's: SPEC=2 (type checks at creation) tests the scheduler, not the decoding
  tg::Context no_spec({{"SPEC", 0}});
  std::vector<SchedCase> cs;
  std::vector<tg::UOp> pool;
  std::string line;
  auto ref = [&](const std::string& w) -> tg::UOp {
    if (w.empty() || w[0] != '@') throw std::runtime_error("bad graph reference " + w);
    return pool.at(std::stoul(w.substr(1)));
  };
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("+ ", 0) == 0) {
      pool.push_back(tg::decode_node(line.substr(2), pool));
      continue;
    }
    size_t sp = line.find(' ');
    std::string key = line.substr(0, sp), rest = sp == std::string::npos ? "" : line.substr(sp + 1);
    if (key == "case") {
      pool.clear();
      cs.emplace_back();
      size_t a = rest.find(' '), b = rest.rfind(' ');
      cs.back().id = std::stoi(rest.substr(0, a));
      cs.back().prog = rest.substr(a + 1, b - a - 1);
      cs.back().nth = std::stoi(rest.substr(b + 1));
      continue;
    }
    SchedCase& c = cs.back();
    if (key == "rangeify_debug") {
      int n = std::stoi(rest);
      for (int i = 0; i < n && std::getline(f, line); i++) c.rangeify_debug.push_back(line);
    } else if (key == "step_out") {
      size_t b = rest.find(' ');
      c.step_outs.emplace_back(std::stoi(rest.substr(0, b)), ref(rest.substr(b + 1)));
    } else if (key == "ctx") {
      size_t p = 0;
      while (p < rest.size()) {
        size_t e = rest.find(' ', p);
        std::string kv = rest.substr(p, e == std::string::npos ? std::string::npos : e - p);
        size_t q = kv.find('=');
        if (q != std::string::npos) c.ctx.emplace_back(kv.substr(0, q), std::stoll(kv.substr(q + 1)));
        p = e == std::string::npos ? rest.size() : e + 1;
      }
    } else if (key == "big_sink")
      c.big_sink = ref(rest);
    else if (key == "error")
      c.error = rest;
    else if (key == "context")
      c.context = rest;
    else if (key == "kernel_graph")
      c.kernel_graphs.push_back(ref(rest));
    else if (key == "linear_unplanned")
      c.linear_unplanned = ref(rest);
    else if (key == "linear")
      c.linear = ref(rest);
    else if (key == "var") {
      size_t b = rest.rfind(' ');
      c.vars.emplace_back(rest.substr(0, b), std::stoll(rest.substr(b + 1)));
    } else if (key == "steps") {
      int n = std::stoi(rest);
      for (int i = 0; i < n && std::getline(f, line); i++) c.steps.push_back(line);
    } else
      throw std::runtime_error("unknown golden line " + line);
  }
  return cs;
}

// BUFFER numbers not present in the big sink (new_buffer's counter) renumbered by first appearance
inline std::vector<std::string> normalized(const tg::UOp& g, const tg::UOp& big_sink) {
  std::set<long long> known;
  for (const tg::UOp& u : big_sink.toposort())
    if (u.op() == tg::Ops::BUFFER && u.param_arg()) known.insert((long long)u.param_arg()->slot);
  std::map<long long, long long> renum;
  std::vector<std::pair<tg::UOp, tg::UOp>> sub;
  for (const tg::UOp& u : g.toposort()) {
    if (u.op() != tg::Ops::BUFFER || !u.param_arg() || known.count((long long)u.param_arg()->slot)) continue;
    long long s = (long long)u.param_arg()->slot;
    if (!renum.count(s)) renum[s] = 1000000 + (long long)renum.size();
    auto* p = new tg::ParamArg(*u.param_arg());
    p->slot = renum[s];
    sub.emplace_back(u, u.with_arg(tg::Arg(static_cast<const tg::ArgObj*>(p))));
  }
  tg::UOp n = sub.empty() ? g : g.substitute(sub, nullptr, true);
  return tg::encode_graph(n);
}
