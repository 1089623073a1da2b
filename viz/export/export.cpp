#include "viz/export/export.h"

#include <map>
#include <nlohmann/json.hpp>

#include "viz/reader/trace_profile.h"

namespace tg::viz {

using nlohmann::json;

ExportCounts export_chrome(const Trace& t, std::ostream& out) {
  Profile p = build_profile(t, /*tiny=*/false);
  ExportCounts n;
  const int64_t t0 = p.t_start;
  auto us = [&](int64_t ns) { return (double)(ns - t0) / 1e3; };
  json events = json::array();
  auto meta = [&](const char* what, int pid, int tid, const std::string& name, int sort) {
    // every event has a category: the format leaves it optional, but Chrome writes it and consumers expect it
    events.push_back(
        {{"ph", "M"}, {"cat", "__metadata"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
    if (sort >= 0)
      events.push_back({{"ph", "M"},
                        {"cat", "__metadata"},
                        {"name", std::string(what) == "process_name" ? "process_sort_index" : "thread_sort_index"},
                        {"pid", pid},
                        {"tid", tid},
                        {"args", {{"sort_index", sort}}}});
  };
  meta("process_name", 1, 0, "devices", 1);
  meta("process_name", 2, 0, "host", 2);
  meta("process_name", 3, 0, "memory", 3);
  auto span = [&](int pid, int tid, const std::string& name, const char* cat, int64_t st, int64_t en, json args) {
    events.push_back({{"ph", "X"},
                      {"name", name},
                      {"cat", cat},
                      {"pid", pid},
                      {"tid", tid},
                      {"ts", us(st)},
                      {"dur", (double)std::max<int64_t>(en - st, 0) / 1e3},
                      {"args", std::move(args)}});
  };
  // device lanes (kernel runs) and host lanes (ranges): one thread each
  int device_tid = 0, host_tid = 0;
  for (const Lane& l : p.lanes) {
    bool host = l.spans.empty() || l.spans[0].kernel_event == 0;
    int pid = host ? 2 : 1, tid = host ? ++host_tid : ++device_tid;
    meta("thread_name", pid, tid, l.name, tid);
    for (const Span& s : l.spans) {
      if (host) {
        span(pid, tid, s.name, "range", s.t_start, s.t_end, json::object());
        n.ranges++;
        continue;
      }
      json args = json::object();
      if (s.program) {
        args["program"] = s.program;
        if (const ProgramRow* prg = t.program(s.program)) {
          if (prg->context) args["context"] = prg->context;
          double ns = (double)std::max<int64_t>(s.t_end - s.t_start, 1);
          if (prg->ops >= 0) args["GFLOPS"] = (double)prg->ops / ns;
          if (prg->mem >= 0) args["GB/s"] = (double)prg->mem / ns;
        }
      }
      span(pid, tid, s.name, s.program ? "kernel" : "copy", s.t_start, s.t_end, std::move(args));
      n.kernel_runs++;
    }
  }
  // rewrite contexts and their steps, per recording thread
  std::map<int64_t, int> thread_tid;
  for (const ContextRow& c : t.contexts()) {
    auto [it, fresh] = thread_tid.emplace(c.thread, 0);
    if (fresh) {
      it->second = ++host_tid;
      meta("thread_name", 2, it->second, "rewrites (thread " + std::to_string(thread_tid.size()) + ")", it->second);
    }
    int64_t en = std::max(c.t_end, c.t_start);
    span(2, it->second, c.name, "context", c.t_start, en, {{"context", c.id}});
    n.contexts++;
    for (int64_t sid : c.steps) {
      const StepRow& s = t.step(sid);
      span(2, it->second, s.name, "step", s.t_start, std::max(s.t_end, s.t_start),
           {{"step", s.id}, {"depth", s.depth}, {"matches", s.n_matches}});
      n.steps++;
    }
  }
  // memory: a counter per device
  for (const MemoryLane& m : p.memory)
    for (const auto& [ts, bytes] : m.steps) {
      events.push_back({{"ph", "C"},
                        {"cat", "memory"},
                        {"name", m.device + " Memory"},
                        {"pid", 3},
                        {"tid", 0},
                        {"ts", us(ts)},
                        {"args", {{"bytes", bytes}}}});
      n.memory++;
    }
  for (const MarkerRow& m : p.markers) {
    events.push_back({{"ph", "i"},
                      {"s", "g"},
                      {"name", m.name},
                      {"cat", "marker"},
                      {"pid", 2},
                      {"tid", 0},
                      {"ts", us(m.t)},
                      {"args", {{"color", m.color}}}});
    n.markers++;
  }
  json doc = {{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ns"},
              {"metadata", {{"source", "tinygrad-cpp trace"}, {"trace", t.path()}, {"command", t.meta()["command"]}}}};
  out << doc.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
  return n;
}

}  // namespace tg::viz
