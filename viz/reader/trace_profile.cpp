#include "viz/reader/trace_profile.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace tg::viz {

const char* mode_name(int mode) { return mode == 2 ? "write+read" : mode == 1 ? "write" : "read"; }

std::vector<BufferArg> parse_bufs(const Trace& t, const KernelEventRow& k) {
  std::vector<BufferArg> out;
  if (k.bufs.empty()) return out;
  auto bad = [&](const std::string& what) -> std::vector<BufferArg> { t.fail("kernel_events", k.id, "bufs " + what); };
  nlohmann::json j = nlohmann::json::parse(k.bufs, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return bad("is not JSON");
  if (!j.is_array()) return bad("is not a list");
  for (const auto& e : j) {
    if (!e.is_array() || e.size() != 3 || !e[0].is_number_integer() || !e[1].is_number_integer() ||
        !e[2].is_number_integer())
      return bad("holds " + e.dump() + ", not [buffer, nbytes, mode]");
    BufferArg a{e[0].get<int64_t>(), e[1].get<int64_t>(), (int)e[2].get<int64_t>()};
    if (a.buffer < 0 || a.nbytes < 0 || a.mode < 0 || a.mode > 2) return bad("holds " + e.dump() + ": out of range");
    out.push_back(a);
  }
  return out;
}

Profile build_profile(const Trace& t, bool tiny) {
  Profile p;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  auto span = [&](int64_t a, int64_t b) { lo = std::min(lo, std::min(a, b)), hi = std::max(hi, std::max(a, b)); };
  std::map<std::string, size_t> lane_of;
  auto lane = [&](const std::string& name) -> Lane& {
    auto [it, fresh] = lane_of.emplace(name, p.lanes.size());
    if (fresh) p.lanes.push_back(Lane{name, {}});
    return p.lanes[it->second];
  };
  for (const KernelEventRow& k : t.kernel_events()) {
    const ProgramRow* prg = k.program ? t.program(k.program) : nullptr;
    lane(k.device).spans.push_back(Span{k.name, k.t_start, k.t_end, k.program, prg ? prg->context : 0, k.id, 0});
    span(k.t_start, k.t_end);
  }
  for (const RangeRow& r : t.ranges()) {
    lane(r.device).spans.push_back(Span{r.name, r.t_start, r.t_end, 0, 0, 0, 0});
    span(r.t_start, r.t_end);
  }
  if (tiny) {
    Lane& l = lane("TINY");
    for (const ContextRow& c : t.contexts()) {
      int64_t en = std::max(c.t_end, c.t_start);
      l.spans.push_back(Span{c.name, c.t_start, en, 0, c.id, 0, 0});
      span(c.t_start, en);
    }
    for (const StepRow& s : t.steps()) {
      int64_t en = std::max(s.t_end, s.t_start);
      l.spans.push_back(Span{s.name, s.t_start, en, 0, s.context, 0, 1 + s.depth});
      span(s.t_start, en);
    }
    if (l.spans.empty()) p.lanes.pop_back();
  } else {
    for (const ContextRow& c : t.contexts()) span(c.t_start, std::max(c.t_end, c.t_start));
  }
  for (Lane& l : p.lanes)
    std::stable_sort(l.spans.begin(), l.spans.end(),
                     [](const Span& a, const Span& b) { return a.t_start < b.t_start; });
  p.markers = t.markers();
  for (const MarkerRow& m : p.markers) span(m.t, m.t);
  for (const MemEventRow& m : t.mem_events()) span(m.t, m.t);
  if (lo > hi) lo = hi = 0;
  p.t_start = lo, p.t_end = hi;

  // memory lanes: the reference's graph_layout. A buffer's users are the runs that named it while it was allocated.
  std::map<std::string, size_t> mem_of;
  std::vector<int64_t> bytes;
  auto mem_lane = [&](const std::string& dev) -> size_t {
    auto [it, fresh] = mem_of.emplace(dev, p.memory.size());
    if (fresh) p.memory.push_back(MemoryLane{dev, {}, 0, 0, {}}), bytes.push_back(0);
    return it->second;
  };
  // kernel runs and memory events merged by time: a run uses the buffers live when it ends (its outputs are
  // allocated after it starts), and a buffer freed at the instant a run ends was that run's
  const auto& mev = t.mem_events();
  const auto& kev = t.kernel_events();
  std::vector<size_t> by_end(kev.size());
  for (size_t i = 0; i < kev.size(); i++) by_end[i] = i;
  std::stable_sort(by_end.begin(), by_end.end(), [&](size_t a, size_t b) { return kev[a].t_end < kev[b].t_end; });
  std::unordered_map<int64_t, std::pair<size_t, size_t>> where;  // buffer -> (lane, index) while live
  size_t ki = 0;
  auto take_runs_until = [&](int64_t ts, bool inclusive) {
    for (; ki < by_end.size() && (kev[by_end[ki]].t_end < ts || (inclusive && kev[by_end[ki]].t_end == ts)); ki++) {
      const KernelEventRow& k = kev[by_end[ki]];
      std::vector<BufferArg> args = parse_bufs(t, k);
      for (size_t n = 0; n < args.size(); n++) {
        auto it = where.find(args[n].buffer);
        if (it == where.end()) continue;
        p.memory[it->second.first].buffers[it->second.second].users.push_back(
            BufferUser{k.id, k.name, (int)n, args[n].mode});
      }
    }
  };
  for (const MemEventRow& m : mev) {
    take_runs_until(m.t, !m.alloc);
    size_t li = mem_lane(m.device);
    MemoryLane& ml = p.memory[li];
    if (m.alloc) {
      if (where.count(m.buffer)) continue;  // allocated twice without a free: a damaged trace; keep the first
      where[m.buffer] = {li, ml.buffers.size()};
      ml.buffers.push_back(BufferLife{m.buffer, m.size, m.nbytes, m.t, p.t_end, m.dtype, false, {}});
      bytes[li] += m.nbytes;
      if (bytes[li] > ml.peak) ml.peak = bytes[li], ml.t_peak = m.t;
    } else {
      auto it = where.find(m.buffer);
      if (it == where.end() || it->second.first != li) continue;  // freed without an alloc in this trace
      BufferLife& b = ml.buffers[it->second.second];
      b.t_free = m.t, b.freed = true;
      bytes[li] -= b.nbytes;
      where.erase(it);
    }
    ml.steps.emplace_back(m.t, bytes[li]);  // one per event (the export's counter events), even at one instant
  }
  take_runs_until(INT64_MAX, true);
  return p;
}

const MemoryLane* memory_lane(const Profile& p, const std::string& device) {
  for (const MemoryLane& m : p.memory)
    if (m.device == device) return &m;
  return nullptr;
}

}  // namespace tg::viz
