// tinyviz-cli profile and export: the reference's `python -m tinygrad.viz.cli` profile view (viz/cli.py) over a trace,
// and the Trace Event Format export.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "viz/cli/cli_common.h"
#include "viz/export/export.h"
#include "viz/reader/trace_profile.h"

namespace tg::viz {

using json = nlohmann::ordered_json;  // keys in the order written, as the reference's dicts

namespace {

// helpers.time_to_str
std::string time_to_str(double t, int w) {
  char buf[64];
  if (t > 10)
    std::snprintf(buf, sizeof(buf), "%*.2fs ", w, t);
  else if (t > 10 / 1e3)
    std::snprintf(buf, sizeof(buf), "%*.2fms", w, t * 1e3);
  else
    std::snprintf(buf, sizeof(buf), "%*.2fus", w, t * 1e6);
  return buf;
}
std::string pad(const std::string& s, size_t n) { return s.size() >= n ? s : s + std::string(n - s.size(), ' '); }
std::string fmt_num(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof(b), f, v);
  return b;
}
// viz/cli.py to_str and fmt_data
std::string to_str(const std::string& k, const json& v) {
  if (v.is_string()) return k + " " + v.get<std::string>();
  double x = v.get<double>();
  if (k == "FLOPS" || k.rfind("B/s", 0) == 0)
    return x < 1e13 ? fmt_num("%.0f G", x * 1e-9) + k : fmt_num("%.0f T", x * 1e-12) + k;
  if (k == "B") {
    for (auto [s, u] : {std::pair<double, const char*>{1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}})
      if (x >= s) return fmt_num("%.0f ", x / s) + u;
    return fmt_num("%.0f B", x);
  }
  return k + "=" + v.dump();
}
std::string fmt_data(const json& data) {
  std::string out;
  for (auto it = data.begin(); it != data.end(); ++it)
    out += (out.empty() ? "" : "  ") + pad(to_str(it.key(), *it), 14);
  return out;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> d(b.size() + 1);
  for (size_t j = 0; j <= b.size(); j++) d[j] = j;
  for (size_t i = 1; i <= a.size(); i++) {
    size_t prev = d[0];
    d[0] = i;
    for (size_t j = 1; j <= b.size(); j++) {
      size_t cur = d[j];
      d[j] = std::min({d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return d[b.size()];
}
// viz/cli.py get(): the item, else an error that names the closest one
[[noreturn]] void not_found(const Trace& t, const std::string& what, const std::string& key,
                            const std::vector<std::string>& have) {
  std::string best;
  size_t bd = SIZE_MAX;
  for (const std::string& h : have)
    if (size_t d = edit_distance(key, h); d < bd) bd = d, best = h;
  std::string msg = "trace '" + t.path() + "': " + what + " \"" + key + "\" not found in list";
  if (!best.empty() && bd <= std::max(key.size(), best.size()) * 2 / 5)
    msg += ", did you mean \"" + best + "\"?";
  else if (!have.empty()) {
    msg += " (";
    for (size_t i = 0; i < have.size() && i < 12; i++) msg += (i ? ", " : "") + have[i];
    msg += have.size() > 12 ? ", ...)" : ")";
  }
  throw TraceError(msg);
}

// a rate as an integer, saturated (a damaged trace's sizes over a tiny duration overflow an int64)
int64_t sat(double v) {
  if (!(v == v)) return 0;
  return v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v;
}

struct Row {  // one event of a lane, as viz/cli.py prints it
  std::string device, name;
  double st_us = 0, dur_us = 0;
  json fmt = json::object();
  int64_t context = 0;
};

}  // namespace

namespace {

// tinyviz-cli profile's arguments (viz/cli.py's argparse)
struct ProfileArgs {
  std::vector<std::string> src;       // -s SOURCE [NAME...]
  std::vector<std::string> interval;  // --interval START [END]
  bool list = false;                  // --list
  int64_t top = 0;                    // -t [COUNT]: 0 every event; >0 that many kernels by total time; <0 all of them
};

ProfileArgs parse_profile_args(int argc, char** argv) {
  ProfileArgs a;
  for (int i = 0; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--list" || arg == "--ls")
      a.list = true;
    else if (arg == "-s" || arg == "--src") {
      while (i + 1 < argc && argv[i + 1][0] != '-') a.src.push_back(argv[++i]);
      if (a.src.empty()) throw TraceError("profile: -s needs a SOURCE (tinyviz-cli profile TRACE --list lists them)");
    } else if (arg == "--interval") {
      while (i + 1 < argc && argv[i + 1][0] != '-' && a.interval.size() < 2) a.interval.push_back(argv[++i]);
      if (a.interval.empty()) throw TraceError("profile: --interval needs a START marker and optionally an END marker");
    } else if (arg == "-t") {
      a.top = 20;  // the count is optional (-1: every kernel)
      if (i + 1 < argc) {
        char* e = nullptr;
        long long v = std::strtoll(argv[i + 1], &e, 10);
        if (e != argv[i + 1] && !*e) a.top = v, i++;
      }
    } else
      throw TraceError("profile: unknown argument '" + arg + "'");
  }
  return a;
}

// What the printers of one `profile` call share: the trace and its profile, the arguments, times relative to the
// run's start, and the output (text lines, or JSON Lines with --json).
class ProfilePrinter {
 public:
  ProfilePrinter(Trace& t, const Profile& p, const ProfileArgs& a, bool as_json)
      : t_(t), p_(p), a_(a), as_json_(as_json) {
    for (const KernelEventRow& k : t.kernel_events()) run_by_id_[k.id] = &k;
  }

  void text(const std::string& s) const {
    if (as_json_)
      std::printf("%s\n", json({{"value", s}}).dump().c_str());
    else
      std::printf("%s\n", s.c_str());
  }

  // -s "<DEVICE> Memory": every alloc and free by time, with the kernels that used each buffer
  void memory(const MemoryLane& mem) const {
    if (as_json_)
      std::printf("%s\n", json({{"peak", mem.peak}}).dump().c_str());
    else
      std::printf("Peak: %lld\n%-10s  %-6s  %8s  Info\n", (long long)mem.peak, "TS", "Event", "Key");
    struct Ev {
      int64_t t;
      bool alloc;
      const BufferLife* b;
    };
    std::vector<Ev> evs;
    for (const BufferLife& b : mem.buffers) evs.push_back({b.t_alloc, true, &b}), evs.push_back({b.t_free, false, &b});
    std::stable_sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) { return a.t < b.t; });
    for (const Ev& e : evs) {
      std::string info;
      if (e.alloc)
        info = "{'dtype': '" + e.b->dtype + "', 'sz': " + std::to_string(e.b->size) + "}";
      else
        for (const BufferUser& u : e.b->users)
          info += (info.empty() ? "" : ", ") + u.name + " " + mode_name(u.mode) + "@data" + std::to_string(u.num);
      int64_t ts = (int64_t)rel(e.t);
      if (as_json_)
        std::printf("%s\n",
                    json({{"event", e.alloc ? "alloc" : "free"}, {"ts", ts}, {"key", e.b->buffer}, {"info", info}})
                        .dump(-1, ' ', false, json::error_handler_t::replace)
                        .c_str());
      else
        std::printf("%-10lld  %-6s  %8lld  %s\n", (long long)ts, e.alloc ? "alloc" : "free", (long long)e.b->buffer,
                    info.c_str());
    }
  }

  // --interval START [END]: the window between two markers (microseconds from the run's start)
  std::pair<double, double> window() const {
    if (a_.interval.empty()) return {-1e300, 1e300};
    auto marker = [&](const std::string& name) {
      for (const MarkerRow& m : p_.markers)
        if (m.name == name) return rel(m.t);
      std::vector<std::string> names;
      for (const MarkerRow& m : p_.markers) names.push_back(m.name);
      if (names.empty())
        throw TraceError("trace '" + t_.path() + "': marker \"" + name +
                         "\" not found: the trace has no markers (tg::profile_marker)");
      not_found(t_, "marker", name, names);
    };
    return {marker(a_.interval[0]), a_.interval.size() > 1 ? marker(a_.interval[1]) : rel(p_.t_end)};
  }

  // -t [COUNT]: the kernels by total time in the window, then "Other" (viz/cli.py produce_top_kernels)
  void top_kernels(const std::vector<const Lane*>& lanes, std::pair<double, double> win) {
    struct Agg {
      double us = 0;
      int64_t count = 0, context = 0;
      std::map<std::string, double> est;  // FLOPs, bytes
    };
    std::vector<std::pair<std::pair<std::string, std::string>, Agg>> agg;
    std::map<std::pair<std::string, std::string>, size_t> at;
    double total = 0;
    for (const Lane* l : lanes)
      for (const Span& s : l->spans) {
        Row r = row_of(*l, s);
        if (r.st_us < win.first || r.st_us > win.second) continue;
        auto key = std::make_pair(l->name, s.name);
        auto [it, fresh] = at.emplace(key, agg.size());
        if (fresh) agg.push_back({key, Agg{}});
        Agg& a = agg[it->second].second;
        a.us += r.dur_us, a.count++, a.context = s.context;
        for (const char* k : {"FLOPS", "B/s mem", "B/s lds"})
          if (r.fmt.contains(k)) a.est[k] += r.fmt[k].get<double>() * r.dur_us * 1e-6;
        total += r.dur_us;
      }
    std::stable_sort(agg.begin(), agg.end(), [](auto& a, auto& b) { return a.second.us > b.second.us; });
    size_t rows = a_.top < 0 ? agg.size() : std::min(agg.size(), (size_t)a_.top);
    auto line = [&](const std::string& name, const Agg& a, const json& fmt) {
      json row = {{"name", name},
                  {"dur_ms", a.us * 1e-3},
                  {"count", a.count},
                  {"pct", total > 0 ? a.us / total * 100 : 0.0},
                  {"fmt", fmt}};
      std::string text = pad(name, 38) + " " + time_to_str(a.us * 1e-6, 9) + " " + fmt_num("%7.0f", (double)a.count) +
                         " " + fmt_num("%6.2f", total > 0 ? a.us / total * 100 : 0.0) + "%" +
                         (fmt.is_object() && !fmt.empty() ? "    " + fmt_data(fmt) : "");
      print(row, text);
    };
    for (size_t i = 0; i < rows; i++) {
      const auto& [key, a] = agg[i];
      if (!wanted(key.second)) continue;
      json fmt = json::object();
      for (const char* k : {"FLOPS", "B/s mem", "B/s lds"})
        if (a.est.count(k)) fmt[k] = sat(a.est.at(k) / (a.us * 1e-6));
      std::string name = a_.src.empty() ? pad(key.first.substr(0, 7), 7) + " " + key.second : key.second;
      line(name, a, fmt);
      list_steps(a.context);
    }
    if (rows > 0 && rows < agg.size()) {
      Agg other;
      for (size_t i = rows; i < agg.size(); i++) other.us += agg[i].second.us, other.count += agg[i].second.count;
      line("Other", other, nullptr);
    }
  }

  // every event in the window by start time, with the markers between them (viz/cli.py produce_all_kernels)
  void all_events(const std::vector<const Lane*>& lanes, std::pair<double, double> win) {
    if (a_.src.empty())
      for (const MemoryLane& m : p_.memory)
        print({{"device", "SOURCE"}, {"name", m.device + " Memory"}, {"st_ms", 0}}, "--- SOURCE " + m.device + " Memory");
    struct Item {
      double ts;
      const Lane* lane;  // nullptr: a marker
      const Span* span;
      const MarkerRow* marker;
    };
    std::vector<Item> all;
    for (const Lane* l : lanes)
      for (const Span& s : l->spans) all.push_back({rel(s.t_start), l, &s, nullptr});
    for (const MarkerRow& m : p_.markers) all.push_back({rel(m.t), nullptr, nullptr, &m});
    std::stable_sort(all.begin(), all.end(), [](const Item& a, const Item& b) { return a.ts < b.ts; });
    for (const Item& e : all) {
      double ts = e.ts;
      if (ts < win.first || ts > win.second) continue;
      if (e.marker) {
        print({{"device", "MARKER"}, {"name", e.marker->name}, {"st_ms", ts * 1e-3}},
              "--- MARKER " + e.marker->name + (ts != 0 ? fmt_num("/%9.2fms", ts * 1e-3) : ""));
        continue;
      }
      if (!wanted(e.span->name)) continue;
      Row r = row_of(*e.lane, *e.span);
      json row = {
          {"device", r.device}, {"name", r.name}, {"dur_ms", r.dur_us * 1e-3}, {"st_ms", r.st_us * 1e-3}, {"fmt", r.fmt}};
      if (r.context) row["context"] = r.context;
      std::string text = "*** " + pad(r.device.substr(0, 7), 7) + " " + pad(r.name, 46) + " tm " +
                         time_to_str(r.dur_us * 1e-6, 9) + fmt_num("/%9.2fms", r.st_us * 1e-3) +
                         (r.fmt.empty() ? "" : " (" + fmt_data(r.fmt) + ")");
      print(row, text);
      list_steps(r.context);
    }
  }

 private:
  double rel(int64_t ns) const { return (double)(ns - p_.t_start) / 1e3; }

  // one span as viz/cli.py prints it: its rates from the program's estimates, or a copy's bytes
  Row row_of(const Lane& l, const Span& s) const {
    Row r{l.name, s.name, rel(s.t_start), (double)std::max<int64_t>(s.t_end - s.t_start, 0) / 1e3};
    r.context = s.context;
    double sec = r.dur_us * 1e-6;
    if (s.program && sec > 0) {
      if (const ProgramRow* prg = t_.program(s.program)) {
        if (prg->ops >= 0) r.fmt["FLOPS"] = sat(prg->ops / sec);
        if (prg->mem >= 0) r.fmt["B/s mem"] = sat(prg->mem / sec);
        if (prg->lds >= 0) r.fmt["B/s lds"] = sat(prg->lds / sec);
      }
    } else if (s.kernel_event && sec > 0) {  // a copy: bytes moved
      if (auto it = run_by_id_.find(s.kernel_event); it != run_by_id_.end()) {
        auto args = parse_bufs(t_, *it->second);
        if (!args.empty()) r.fmt["B/s"] = sat(args[0].nbytes / sec), r.fmt["B"] = args[0].nbytes;
      }
    }
    return r;
  }
  // -s SOURCE NAME...: only these names
  bool wanted(const std::string& name) const {
    return a_.src.size() <= 1 || std::find(a_.src.begin() + 1, a_.src.end(), name) != a_.src.end();
  }
  void print(const json& row, const std::string& text) const {
    if (as_json_)
      std::printf("%s\n", row.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    else
      std::printf("%s\n", text.c_str());
  }
  // --list with events: the rewrite steps of each kernel's codegen context, once
  void list_steps(int64_t ctx) {
    if (!a_.list || !ctx || std::find(seen_contexts_.begin(), seen_contexts_.end(), ctx) != seen_contexts_.end()) return;
    seen_contexts_.push_back(ctx);
    for (int64_t sid : t_.context(ctx).steps) {
      const StepRow& s = t_.step(sid);
      text(std::string((size_t)std::min(s.depth, 32), ' ') + s.name +
           (s.n_matches ? " - " + std::to_string(s.n_matches) : ""));
    }
  }

  Trace& t_;
  const Profile& p_;
  const ProfileArgs& a_;
  bool as_json_;
  std::unordered_map<int64_t, const KernelEventRow*> run_by_id_;
  std::vector<int64_t> seen_contexts_;
};

}  // namespace

int cmd_profile(Trace& t, int argc, char** argv, bool as_json) {
  ProfileArgs args = parse_profile_args(argc, argv);
  Profile p = build_profile(t);
  ProfilePrinter out(t, p, args, as_json);
  // the sources: every lane, and every device's memory
  std::vector<std::string> sources;
  for (const Lane& l : p.lanes) sources.push_back(l.name);
  for (const MemoryLane& m : p.memory) sources.push_back(m.device + " Memory");
  if (sources.empty())
    throw TraceError("trace '" + t.path() + "' holds no profile: record it with PROFILE=1 or VIZ=-1");
  if (args.list && args.src.empty()) {
    out.text("ALL");
    for (const std::string& s : sources) out.text(s);
    return 0;
  }
  // -s picks one source: a lane or a device's memory
  const Lane* lane = nullptr;
  const MemoryLane* mem = nullptr;
  if (!args.src.empty()) {
    for (const Lane& l : p.lanes)
      if (l.name == args.src[0]) lane = &l;
    for (const MemoryLane& m : p.memory)
      if (m.device + " Memory" == args.src[0]) mem = &m;
    if (!lane && !mem) not_found(t, "source", args.src[0], sources);
  }
  if (mem) {
    out.memory(*mem);
    return 0;
  }
  std::vector<const Lane*> lanes;
  if (lane)
    lanes.push_back(lane);
  else
    for (const Lane& l : p.lanes) lanes.push_back(&l);  // ALL: every timeline, TINY (rewrites) included
  if (args.top != 0)
    out.top_kernels(lanes, out.window());
  else
    out.all_events(lanes, out.window());
  return 0;
}

int cmd_export(Trace& t, int argc, char** argv, bool as_json) {
  if (argc != 2 || std::strcmp(argv[0], "--chrome") != 0)
    throw TraceError("export takes --chrome OUT.json (the Trace Event Format: Perfetto, chrome://tracing, speedscope)");
  std::string path = argv[1];
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw TraceError("export: cannot write '" + path + "': " + std::strerror(errno));
  ExportCounts n = export_chrome(t, f);
  f.close();
  if (!f) throw TraceError("export: writing '" + path + "' failed: " + std::strerror(errno));
  json summary = {{"out", path},        {"events", n.total()},    {"kernel_runs", n.kernel_runs},
                  {"ranges", n.ranges}, {"contexts", n.contexts}, {"steps", n.steps},
                  {"memory", n.memory}, {"markers", n.markers}};
  if (as_json)
    std::printf("%s\n", summary.dump().c_str());
  else
    std::printf(
        "wrote %s: %llu events (%llu kernel runs, %llu ranges, %llu contexts, %llu steps, %llu memory counters, %llu "
        "markers); open it in https://ui.perfetto.dev, chrome://tracing or speedscope\n",
        path.c_str(), (unsigned long long)n.total(), (unsigned long long)n.kernel_runs, (unsigned long long)n.ranges,
        (unsigned long long)n.contexts, (unsigned long long)n.steps, (unsigned long long)n.memory,
        (unsigned long long)n.markers);
  return 0;
}

}  // namespace tg::viz
