// Loader for tests/data/schedule_goldens.txt (written by tests/parity/gen_schedule_goldens.py, which describes the
// format), and the BUFFER renumbering the scheduler tests compare with.
#pragma once
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lib/helpers.h"
#include "tests/support/golden_file.h"

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
  tg::test::GoldenFile f(path, tg::test::GoldenFile::kNodePool);
  // the graphs are the reference's: SPEC=2 (type checks at creation) tests the scheduler, not the decoding
  tg::Context no_spec({{"SPEC", 0}});
  std::vector<SchedCase> cs;
  while (f.next()) {
    const std::string& rest = f.rest();
    if (f.is("case")) {  // case <id> <program> <n>
      f.clear_pool();
      std::vector<std::string> w = tg::test::split(rest);
      if (w.size() != 3) f.fail("expected: case <id> <program> <n>");
      cs.push_back({.id = std::stoi(w[0]), .prog = w[1], .nth = std::stoi(w[2])});
      continue;
    }
    if (cs.empty()) f.fail("a record before the first case");
    SchedCase& c = cs.back();
    if (f.is("rangeify_debug"))
      c.rangeify_debug = f.block();
    else if (f.is("step_out")) {
      size_t b = rest.find(' ');
      c.step_outs.emplace_back(std::stoi(rest.substr(0, b)), f.node(rest.substr(b + 1)));
    } else if (f.is("ctx"))
      c.ctx = tg::test::key_values(rest);
    else if (f.is("big_sink"))
      c.big_sink = f.node(rest);
    else if (f.is("error"))
      c.error = rest;
    else if (f.is("context"))
      c.context = rest;
    else if (f.is("kernel_graph"))
      c.kernel_graphs.push_back(f.node(rest));
    else if (f.is("linear_unplanned"))
      c.linear_unplanned = f.node(rest);
    else if (f.is("linear"))
      c.linear = f.node(rest);
    else if (f.is("var")) {
      size_t b = rest.rfind(' ');
      c.vars.emplace_back(rest.substr(0, b), std::stoll(rest.substr(b + 1)));
    } else if (f.is("steps"))
      c.steps = f.block();
    else
      f.unknown();
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

// multi-device graphs (sharded PARAMs, UNSHARD, MSELECT/MSTACK, ALLREDUCE, tuple devices) are out of scope: the
// scheduler ports one device only (schedule/multi.py as one device needs it, no allreduce.py)
inline bool multi_device(const tg::UOp& sink) {
  for (const tg::UOp& u : sink.toposort()) {
    tg::Ops o = u.op();
    if (o == tg::Ops::UNSHARD || o == tg::Ops::MSELECT || o == tg::Ops::MSTACK || o == tg::Ops::ALLREDUCE) return true;
    if ((o == tg::Ops::PARAM || o == tg::Ops::BUFFER) && u.param_arg() && u.param_arg()->device.is_tuple()) return true;
  }
  return false;
}
