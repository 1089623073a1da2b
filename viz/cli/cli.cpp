// tinyviz-cli: inspect a trace from a terminal (scripts, servers without a display, CI). The commands live here,
// main() in tinyviz_cli.cpp, so tests can run them in-process.
#include "viz/cli/cli.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "viz/cli/cli_common.h"
#include "viz/reader/reader.h"
#include "viz/reader/replay.h"

using namespace tg::viz;
using json = nlohmann::ordered_json;

// --json: every command prints JSON instead of text: one object per line for lists (JSON Lines), one object for
// summaries
static bool g_json = false;
static void jprint(const json& j) {
  std::printf("%s\n", j.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
}

static const char* kUsage =
    "usage: tinyviz-cli COMMAND TRACE [ARGS]\n"
    "  info TRACE                      what the trace holds\n"
    "  contexts TRACE                  contexts with their step and match counts\n"
    "  steps TRACE [CONTEXT]           graph_rewrite steps, nested by depth\n"
    "  matches TRACE STEP              the matches of a step: rule, time, before -> after\n"
    "  stats TRACE [--step N|--context N] [--sort matches|attempts|time|excl|rejects] [--top N] [--unmatched]\n"
    "                                  pattern statistics (TRACK_MATCH_STATS) per rule\n"
    "  frame TRACE STEP K              the graph at match K of a step (K=0: input) and what changed\n"
    "  verify TRACE [--full]           replay every step and check it reproduces the recorded output; --full also\n"
    "                                  rebuilds every frame as the reference's VIZ does (a substitute of the whole\n"
    "                                  graph per match) and checks the fast replay gives the same frames and deltas\n"
    "  kernels TRACE [--top N]         kernels by total run time: runs, total and mean time, GFLOPS, GB/s, context\n"
    "  code TRACE KERNEL [--source|--uops|--asm]\n"
    "                                  a kernel's rendered source (the default), its linearized UOps, or the machine\n"
    "                                  code it ran as (the CPU: LLVM's disassembly of the loaded object, loops "
    "marked);\n"
    "                                  KERNEL is its name or its codegen context's number (the kernels command's\n"
    "                                  context column)\n"
    "  profile TRACE [--list] [-s SOURCE [NAME...]] [--interval START [END]] [-t [COUNT]]\n"
    "                                  the profile as tinygrad's `viz.cli` prints it: every kernel run, copy, user "
    "range\n"
    "                                  and marker by time; --list the sources (device lanes, USER, TINY, <DEV> "
    "Memory);\n"
    "                                  -s one source (NAMEs: only those events; a Memory source lists allocs and "
    "frees\n"
    "                                  with the kernels that used each buffer); --interval between two markers; -t "
    "the\n"
    "                                  COUNT (default 20, -1 all) kernels with the most total time\n"
    "  export TRACE --chrome OUT.json  the profile and rewrites in the Trace Event Format (Perfetto, "
    "chrome://tracing,\n"
    "                                  speedscope): kernel runs per device, memory counters, markers, user ranges,\n"
    "                                  rewrite contexts and steps per thread\n"
    "  diff A B [--by-rule|--by-nodes] two traces side by side: contexts aligned by name and order, steps by name,\n"
    "                                  depth and order; equal steps, the first divergent step and match (rule, nodes\n"
    "                                  compared by structure), per-rule match-count and kernel-time deltas; exit 1\n"
    "                                  when they differ. Traces of different producers (the port and an imported\n"
    "                                  tinygrad trace) compare matches by their nodes only, as --by-nodes does\n"
    "  import-tinygrad REWRITES.pkl [PROFILE.pkl] OUT.db\n"
    "                                  a trace from tinygrad's own VIZ=-1 pickles (rewrites.pkl.<user>,\n"
    "                                  profile.pkl.<user>): its contexts, steps, matches, UOps, kernels and profile;\n"
    "                                  the pickles are read through an allow-list of tinygrad's classes and nothing\n"
    "                                  in them is executed\n"
    "every command takes --json: JSON Lines (one object per row) or one object, for scripts\n";

static std::string first_line(const std::string& s, size_t max = 100) {
  std::string r = s.substr(0, s.find('\n'));
  if (r.size() > max) r = r.substr(0, max - 3) + "...";
  return r;
}
static std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}
// a + b, stopping at INT64_MAX (sums of many run times read from a file)
static int64_t add_sat(int64_t a, int64_t b) { return b > 0 && a > INT64_MAX - b ? INT64_MAX : a + b; }
static int64_t to_i(const char* s, const char* what) {
  char* e = nullptr;
  long long v = std::strtoll(s, &e, 10);
  if (!e || *e) throw TraceError(std::string("bad ") + what + " '" + s + "': expected a number");
  return v;
}

static int cmd_info(Trace& t) {
  auto m = t.meta();
  if (g_json) {
    jprint({{"trace", t.path()},
            {"status", m["status"]},
            {"complete", t.complete()},
            {"truncated", t.truncated()},
            {"stopped", m["stopped"]},
            {"command", m["command"]},
            {"schema", t.schema_version()},
            {"contexts", t.contexts().size()},
            {"steps", t.steps().size()},
            {"matches", t.match_count()},
            {"uops", t.uop_count()},
            {"rules", t.rules().size()},
            {"kernels", t.programs().size()},
            {"runs", t.kernel_events().size()},
            {"mem_events", t.mem_events().size()},
            {"markers", t.markers().size()},
            {"ranges", t.ranges().size()}});
    return 0;
  }
  std::printf("trace      %s\n", t.path().c_str());
  std::printf("status     %s%s\n", m["status"].c_str(),
              t.complete()    ? ""
              : t.truncated() ? (" (recording stopped early: " + m["stopped"] +
                                 "; the trace holds everything written before)")
                                    .c_str()
                              : " (the program did not finish: the trace holds what was flushed)");
  std::printf("command    %s\n", m["command"].c_str());
  std::printf("contexts   %zu\nsteps      %zu\nmatches    %llu\nuops       %llu\nrules      %zu\n", t.contexts().size(),
              t.steps().size(), (unsigned long long)t.match_count(), (unsigned long long)t.uop_count(),
              t.rules().size());
  std::printf("kernels    %zu\nruns       %zu\n", t.programs().size(), t.kernel_events().size());
  if (!t.mem_events().empty() || !t.markers().empty() || !t.ranges().empty())
    std::printf("buffers    %zu allocs and frees\nmarkers    %zu\nranges     %zu\n", t.mem_events().size(),
                t.markers().size(), t.ranges().size());
  return 0;
}

static int cmd_kernels(Trace& t, int argc, char** argv) {
  size_t top = 20;
  for (int i = 0; i < argc; i++) {
    if (!std::strcmp(argv[i], "--top") && i + 1 < argc)
      top = (size_t)to_i(argv[++i], "--top");
    else
      throw TraceError(std::string("kernels: unknown argument '") + argv[i] + "'");
  }
  struct Row {
    std::string name, device;
    int64_t runs = 0, ns = 0, ops = -1, mem = -1, context = 0;
  };
  std::vector<Row> rows;
  std::vector<std::pair<std::string, size_t>> index;  // (program id or name, row)
  auto find = [&](const std::string& key) -> Row* {
    for (auto& [k, r] : index)
      if (k == key) return &rows[r];
    return nullptr;
  };
  int64_t total = 0;
  for (const auto& k : t.kernel_events()) {
    std::string key = k.program ? "p" + std::to_string(k.program) : "n" + k.device + k.name;
    Row* r = find(key);
    if (!r) {
      std::string name;
      for (char c : k.name)
        if (!(c == ' ' && !name.empty() && name.back() == ' ')) name += c;  // copy names are padded for DEBUG=2
      Row nr{name, k.device};
      if (const ProgramRow* p = k.program ? t.program(k.program) : nullptr)
        nr.ops = p->ops, nr.mem = p->mem, nr.context = p->context;
      index.emplace_back(key, rows.size());
      rows.push_back(nr);
      r = &rows.back();
    }
    int64_t ns = std::max<int64_t>(0, k.t_end - k.t_start);  // the reader bounds both times by 2^61
    r->runs++, r->ns = add_sat(r->ns, ns);
    total = add_sat(total, ns);
  }
  if (rows.empty() && !g_json) {
    std::printf("no kernel runs in this trace (record with PROFILE=1 or VIZ=-1 on a program that runs kernels)\n");
    return 0;
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ns > b.ns; });
  if (g_json) {
    for (size_t i = 0; i < rows.size() && i < top; i++) {
      const Row& r = rows[i];
      double mean = (double)r.ns / (double)r.runs;
      json j = {{"kernel", r.name},      {"device", r.device},
                {"runs", r.runs},        {"total_ms", r.ns / 1e6},
                {"mean_us", mean / 1e3}, {"pct", 100.0 * (double)r.ns / (double)std::max<int64_t>(total, 1)}};
      if (r.ops >= 0 && mean > 0) j["gflops"] = r.ops / mean;
      if (r.mem >= 0 && mean > 0) j["gbs"] = r.mem / mean;
      if (r.context) j["context"] = r.context;
      jprint(j);
    }
    return 0;
  }
  std::printf("%zu kernel runs, %zu kernels and copies, %.3f ms in total\n", t.kernel_events().size(), rows.size(),
              total / 1e6);
  std::printf("%-28s %-9s %6s %10s %10s %8s %8s %6s %7s\n", "kernel", "device", "runs", "total ms", "mean us", "GFLOPS",
              "GB/s", "%", "context");
  for (size_t i = 0; i < rows.size() && i < top; i++) {
    const Row& r = rows[i];
    double mean = (double)r.ns / (double)r.runs;
    std::string gf = r.ops >= 0 && mean > 0 ? std::to_string(r.ops / mean).substr(0, 6) : "-";
    std::string gb = r.mem >= 0 && mean > 0 ? std::to_string(r.mem / mean).substr(0, 6) : "-";
    std::printf("%-28s %-9s %6lld %10.3f %10.1f %8s %8s %5.1f%% %7s\n", first_line(r.name, 28).c_str(),
                r.device.c_str(), (long long)r.runs, r.ns / 1e6, mean / 1e3, gf.c_str(), gb.c_str(),
                100.0 * (double)r.ns / (double)std::max<int64_t>(total, 1),
                r.context ? std::to_string(r.context).c_str() : "-");
  }
  return 0;
}

// code TRACE KERNEL [--source|--uops|--asm]
static int cmd_code(Trace& t, int argc, char** argv) {
  if (argc < 1) throw TraceError("code needs a KERNEL: its name or its codegen context's number");
  std::string key = argv[0], what = "source";
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--source" || a == "--uops" || a == "--asm")
      what = a.substr(2);
    else
      throw TraceError("code: unknown argument '" + a + "' (expected --source, --uops or --asm)");
  }
  const ProgramRow* p = nullptr;
  size_t same_name = 0;
  bool number = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (number) {
    p = t.program_of_context(to_i(key.c_str(), "context"));
  } else {
    for (const ProgramRow& x : t.programs())
      if (x.name == key && !same_name++) p = &x;
  }
  if (!p) {
    if (t.programs().empty())
      throw TraceError("trace '" + t.path() + "' holds no kernels (record with PROFILE=1 or VIZ=-1)");
    throw TraceError("trace '" + t.path() + "' has no kernel " +
                     (number ? "made by codegen context " + key : "named '" + key + "'") +
                     " (the kernels command lists them)");
  }
  if (same_name > 1 && !g_json)
    std::fprintf(stderr,
                 "tinyviz-cli: %zu kernels are named %s; this is program %lld (context %lld): give a context "
                 "number for another\n",
                 same_name, key.c_str(), (long long)p->id, (long long)p->context);
  json j = {{"kernel", p->name}, {"program", p->id}, {"device", p->device}};
  if (p->context) j["context"] = p->context;
  if (what != "asm") {
    auto [source, uops] = t.program_text(p->id);
    const std::string& text = what == "source" ? source : uops;
    if (g_json) {
      j[what] = text;
      jprint(j);
    } else {
      std::fputs(text.c_str(), stdout);
      if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
    }
    return 0;
  }
  auto no_code = [&](const std::string& why) {  // exit 1, saying why (in the JSON when asked for JSON)
    if (g_json) {
      j["error"] = why;
      jprint(j);
    } else {
      std::fprintf(stderr, "tinyviz-cli: kernel %s: %s\n", p->name.c_str(), why.c_str());
    }
    return 1;
  };
  if (!t.has_machine_code())
    return no_code("this trace holds no machine code (it was recorded before traces held it: schema " +
                   std::to_string(t.schema_version()) + ", machine code since schema 6)");
  std::optional<MachineCodeRow> mc = t.machine_code(p->id);
  if (!mc) return no_code("the trace holds no machine code for it (it was not compiled while the trace was recorded)");
  if (g_json) {
    j["kind"] = mc->kind;
    j["asm"] = mc->text;
    jprint(j);
    return 0;
  }
  if (mc->text.empty()) {
    std::printf("kernel %s on %s: the device gives no machine code (%s)\n", p->name.c_str(), p->device.c_str(),
                mc->kind.c_str());
    return 0;
  }
  std::fputs(mc->text.c_str(), stdout);
  if (mc->text.back() != '\n') std::fputc('\n', stdout);
  return 0;
}

static int cmd_contexts(Trace& t) {
  if (!g_json) std::printf("%6s %7s %8s %10s  %s\n", "id", "steps", "matches", "ms", "name");
  for (const auto& c : t.contexts()) {
    int64_t m = 0;
    for (int64_t s : c.steps) m += t.step(s).n_matches;
    double ms = c.t_end ? (c.t_end - c.t_start) / 1e6 : 0;
    if (g_json) {
      jprint({{"id", c.id}, {"steps", c.steps.size()}, {"matches", m}, {"ms", ms}, {"name", c.name}});
      continue;
    }
    std::printf("%6lld %7zu %8lld %10.3f  %s\n", (long long)c.id, c.steps.size(), (long long)m, ms, c.name.c_str());
  }
  return 0;
}

static int cmd_steps(Trace& t, int64_t ctx) {
  for (const auto& c : t.contexts()) {
    if (ctx && c.id != ctx) continue;
    if (!g_json) std::printf("context %lld: %s\n", (long long)c.id, c.name.c_str());
    for (int64_t sid : c.steps) {
      const StepRow& s = t.step(sid);
      if (g_json) {
        json j = {{"context", c.id},        {"id", s.id},     {"depth", s.depth}, {"name", s.name},
                  {"matches", s.n_matches}, {"file", s.file}, {"line", s.line},   {"bottom_up", s.bottom_up},
                  {"walk", s.walk}};
        if (!s.error.empty()) j["error"] = s.error;
        jprint(j);
        continue;
      }
      // the reader bounds depths by the number of steps; a listing still indents at most 32 levels
      std::printf("  %6lld %*s%-40s %6lld matches  %s:%d%s%s%s\n", (long long)s.id, std::min(s.depth, 32) * 2, "",
                  s.name.c_str(), (long long)s.n_matches, s.file.c_str(), s.line, s.bottom_up ? " bottom_up" : "",
                  s.walk ? " walk" : "", s.error.empty() ? "" : (" ERROR: " + s.error).c_str());
    }
  }
  return 0;
}

static int cmd_matches(Trace& t, int64_t step) {
  const StepRow& s = t.step(step);
  const std::vector<MatchRow> matches = t.matches(step);
  t.check_matches(step, matches);
  if (g_json) {
    for (const auto& m : matches) {
      auto r = t.rule(m.rule);
      json j = {{"ordinal", m.ordinal},
                {"us", m.dur_ns / 1e3},
                {"file", r ? r->file : ""},
                {"line", r ? r->line : 0},
                {"before", m.before},
                {"after", m.after},
                {"before_label", one_line(t.label(m.before))},
                {"after_label", one_line(t.label(m.after))}};
      if (m.is_error) j["error"] = t.str(m.error);
      jprint(j);
    }
    return 0;
  }
  std::printf("step %lld %s (%s:%d), input %lld, output %lld\n", (long long)s.id, s.name.c_str(), s.file.c_str(),
              s.line, (long long)s.input_root, (long long)s.output_root);
  for (const auto& m : matches) {
    auto r = t.rule(m.rule);
    std::printf("%5lld %9.2f us  %s:%d  %s -> %s%s\n", (long long)m.ordinal, m.dur_ns / 1e3, r ? r->file.c_str() : "?",
                r ? r->line : 0, one_line(t.label(m.before)).c_str(), one_line(t.label(m.after)).c_str(),
                m.is_error ? ("  ERROR " + one_line(t.str(m.error))).c_str() : "");
  }
  return 0;
}

static int cmd_stats(Trace& t, int argc, char** argv) {
  int64_t step = 0, ctx = 0, top = 0;
  std::string sort = "time";
  bool unmatched = false;
  for (int i = 0; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) throw TraceError("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--step")
      step = to_i(next(), "step");
    else if (a == "--context")
      ctx = to_i(next(), "context");
    else if (a == "--sort")
      sort = next();
    else if (a == "--top")
      top = to_i(next(), "count");
    else if (a == "--unmatched")
      unmatched = true;
    else
      throw TraceError("unknown option '" + a + "'");
  }
  auto stats = t.rule_stats(step, ctx);
  if (unmatched)
    stats.erase(std::remove_if(stats.begin(), stats.end(), [](auto& r) { return r.matches > 0 || r.attempts == 0; }),
                stats.end());
  auto key = [&](const RuleStatRow& r) -> double {
    if (sort == "matches") return (double)r.matches;
    if (sort == "attempts") return (double)r.attempts;
    if (sort == "excl") return (double)r.excl_ns;
    if (sort == "rejects") return (double)r.early_rejects;
    if (sort == "time") return (double)r.incl_ns;
    throw TraceError("unknown sort key '" + sort + "' (matches, attempts, time, excl, rejects)");
  };
  std::stable_sort(stats.begin(), stats.end(), [&](auto& a, auto& b) { return key(a) > key(b); });
  if (top > 0 && (int64_t)stats.size() > top) stats.resize(top);
  if (g_json) {
    for (const auto& r : stats) {
      auto rr = t.rule(r.rule);
      jprint({{"rule", r.rule},
              {"matches", r.matches},
              {"attempts", r.attempts},
              {"rejects", r.early_rejects},
              {"excl_ms", r.excl_ns / 1e6},
              {"incl_ms", r.incl_ns / 1e6},
              {"file", rr ? rr->file : ""},
              {"line", rr ? rr->line : 0},
              {"source", rr ? rr->source : ""}});
    }
    return 0;
  }
  std::printf("%8s %9s %9s %6s %10s %10s  %-28s %s\n", "matches", "attempts", "rejects", "rate", "excl ms", "incl ms",
              "file:line", "rule");
  uint64_t tm = 0, ta = 0;
  for (const auto& r : stats) {
    auto rr = t.rule(r.rule);
    std::string loc = rr ? rr->file.substr(rr->file.rfind('/') + 1) + ":" + std::to_string(rr->line) : "?";
    double rate = r.attempts ? 100.0 * r.matches / r.attempts : 0;
    std::printf("%8llu %9llu %9llu %5.1f%% %10.3f %10.3f  %-28s %s\n", (unsigned long long)r.matches,
                (unsigned long long)r.attempts, (unsigned long long)r.early_rejects, rate, r.excl_ns / 1e6,
                r.incl_ns / 1e6, loc.c_str(), rr ? first_line(one_line(rr->source), 90).c_str() : "");
    tm += r.matches, ta += r.attempts;
  }
  std::printf("%8llu %9llu  TOTAL over %zu rules\n", (unsigned long long)tm, (unsigned long long)ta, stats.size());
  return 0;
}

static int cmd_frame(Trace& t, int64_t step, int64_t k) {
  StepReplay r(t, step);
  if (k < 0 || (size_t)k >= r.num_frames())
    throw TraceError("trace '" + t.path() + "': step " + std::to_string(step) + " has frames 0.." +
                     std::to_string(r.num_frames() - 1));
  auto nodes = r.nodes((size_t)k);
  if (g_json) {
    json j = {{"step", step}, {"frame", k}, {"frames", r.num_frames()}, {"root", r.root((size_t)k)}};
    json ns = json::array();
    for (int64_t n : nodes) ns.push_back({{"id", n}, {"label", t.label(n)}, {"src", t.node(n).src}});
    j["nodes"] = std::move(ns);
    if (k > 0) {
      auto d = r.delta((size_t)k);
      j["match"] = {
          {"before", d.before}, {"after", d.after}, {"added", d.added}, {"removed", d.removed}, {"changed", d.changed}};
    }
    if (!r.error().empty()) j["error"] = r.error();
    jprint(j);
    return 0;
  }
  std::printf("step %lld frame %lld/%zu: %zu nodes, root %lld\n", (long long)step, (long long)k, r.num_frames() - 1,
              nodes.size(), (long long)r.root((size_t)k));
  for (int64_t n : nodes) {
    const Node& nd = t.node(n);
    std::string srcs;
    for (int64_t s : nd.src) srcs += (srcs.empty() ? "" : ",") + std::to_string(s);
    std::printf("  %8lld  %-40s [%s]\n", (long long)n, one_line(t.label(n)).c_str(), srcs.c_str());
  }
  if (k > 0) {
    auto d = r.delta((size_t)k);
    std::printf("match: %lld -> %lld; added %zu, removed %zu, changed %zu\n", (long long)d.before, (long long)d.after,
                d.added.size(), d.removed.size(), d.changed.size());
  }
  if (!r.error().empty()) std::printf("replay stopped: %s\n", r.error().c_str());
  return 0;
}

static int cmd_verify(Trace& t, bool full) {
  size_t ok = 0, bad = 0, skipped = 0, frames = 0, groups = 0, differ = 0;
  for (const auto& s : t.steps()) {
    if (!s.output_root) {
      skipped++;
      continue;
    }
    StepReplay r(t, s.id);
    // a group (a function recorded as a step, like the reference's rewrite_group): no matches of its own, its output
    // comes from the steps nested in it and the code between them
    if (r.matches().empty() && !t.child_steps(s.id).empty()) {
      groups++;
      continue;
    }
    frames += r.num_frames();
    if (full)
      if (std::string why = frames_differ(t, s.id); !why.empty()) {
        if (++differ <= 10 && !g_json)
          std::printf("FRAMES DIFFER step %lld %s: %s\n", (long long)s.id, s.name.c_str(), why.c_str());
      }
    if (r.reproduces_output())
      ok++;
    else {
      bad++;
      if (bad <= 10 && !g_json)
        std::printf("MISMATCH step %lld %s: replay gives %lld, recorded output %lld%s\n", (long long)s.id,
                    s.name.c_str(), (long long)r.root(r.num_frames() - 1), (long long)s.output_root,
                    r.error().empty() ? "" : (" (" + r.error() + ")").c_str());
    }
  }
  if (g_json) {
    json j = {{"steps", ok + bad}, {"frames", frames},      {"reproduce", ok},
              {"mismatch", bad},   {"unfinished", skipped}, {"groups", groups}};
    if (full) j["frames_differ"] = differ;
    jprint(j);
    return bad || differ ? 1 : 0;
  }
  std::printf(
      "verified %zu steps (%zu frames): %zu reproduce their output, %zu do not, %zu unfinished, %zu groups "
      "(their output comes from their nested steps)\n",
      ok + bad, frames, ok, bad, skipped, groups);
  if (full) std::printf("every frame against the whole-graph substitute: %zu steps differ\n", differ);
  return bad || differ ? 1 : 0;
}

int tg::viz::cli_main(int argc_in, char** argv_in) {
  std::vector<char*> args;
  g_json = false;
  for (int i = 0; i < argc_in; i++) {
    if (i > 0 && !std::strcmp(argv_in[i], "--json"))
      g_json = true;
    else
      args.push_back(argv_in[i]);
  }
  args.push_back(nullptr);
  int argc = (int)args.size() - 1;
  char** argv = args.data();
  if (argc < 3 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    std::fputs(kUsage, argc < 3 && !(argc == 2 && (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")))
                           ? stderr
                           : stdout);
    return argc < 3 ? 2 : 0;
  }
  std::string cmd = argv[1];
  try {
    if (cmd == "import-tinygrad") return cmd_import_tinygrad(argc - 2, argv + 2, g_json);
    auto t = Trace::open(argv[2]);
    if (cmd == "info") return cmd_info(*t);
    if (cmd == "contexts") return cmd_contexts(*t);
    if (cmd == "steps") return cmd_steps(*t, argc > 3 ? to_i(argv[3], "context") : 0);
    if (cmd == "matches") {
      if (argc < 4) throw TraceError("matches needs a STEP id");
      return cmd_matches(*t, to_i(argv[3], "step"));
    }
    if (cmd == "stats") return cmd_stats(*t, argc - 3, argv + 3);
    if (cmd == "frame") {
      if (argc < 5) throw TraceError("frame needs STEP and K");
      return cmd_frame(*t, to_i(argv[3], "step"), to_i(argv[4], "frame"));
    }
    if (cmd == "verify") {
      bool full = argc == 4 && !std::strcmp(argv[3], "--full");
      if (argc > 4 || (argc == 4 && !full)) throw TraceError("verify takes TRACE [--full]");
      return cmd_verify(*t, full);
    }
    if (cmd == "kernels") return cmd_kernels(*t, argc - 3, argv + 3);
    if (cmd == "code") return cmd_code(*t, argc - 3, argv + 3);
    if (cmd == "profile") return cmd_profile(*t, argc - 3, argv + 3, g_json);
    if (cmd == "export") return cmd_export(*t, argc - 3, argv + 3, g_json);
    if (cmd == "diff") return cmd_diff(*t, argc - 3, argv + 3, g_json);
    std::fprintf(stderr, "tinyviz-cli: unknown command '%s'\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const tg::Error& e) {  // TraceError and the argument errors: what and where
    std::fprintf(stderr, "tinyviz-cli: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "tinyviz-cli: trace '%s': reading it needs more memory than there is\n", argv[2]);
    return 2;
  } catch (const std::exception& e) {  // a bug: the reader should have said what is wrong
    std::fprintf(stderr, "tinyviz-cli: trace '%s': internal error: %s\n", argv[2], e.what());
    return 2;
  } catch (...) {
    std::fprintf(stderr, "tinyviz-cli: trace '%s': internal error\n", argv[2]);
    return 2;
  }
}
