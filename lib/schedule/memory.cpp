#include "lib/schedule/memory.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "lib/codegen/late/uop_props.h"
#include "lib/runtime/support/memory.h"
#include "lib/uop/rewrite.h"

namespace tg {

ContextVar NO_MEMORY_PLANNER("NO_MEMORY_PLANNER", 0, 0, 1);

static void collect_bufs(const UOp& u, std::vector<UOp>& out) {
  if (u.op() == Ops::BUFFER)
    out.push_back(u);
  else if (u.op() == Ops::MSELECT || u.op() == Ops::MSTACK)
    for (const UOp& s : u.src()) collect_bufs(s, out);
}

static bool can_plan(const UOp& b, const UOpSet& held_bufs) {
  if (held_bufs.count(b)) return false;
  Arg d = b.device();
  std::vector<std::string> devs;
  if (d.is_str())
    devs.push_back(d.as_str());
  else if (d.is_tuple())
    for (const Arg& x : d.items()) devs.push_back(x.as_str());
  // CL and WEBGPU do not support views
  for (const std::string& s : devs)
    for (const char* p : {"DISK", "TINYFS", "CL", "WEBGPU"})
      if (s.rfind(p, 0) == 0) return false;
  return true;
}

static int64_t round_up(int64_t n, int64_t a) { return (n + a - 1) / a * a; }

UOp memory_plan_rewrite(const UOp& linear, const UOpSet& held_bufs) {
  if (NO_MEMORY_PLANNER) return linear;
  // compute lifetimes for all plannable internal buffers (insertion ordered)
  std::vector<UOp> order;
  UOpMap<int64_t> first_appearance, last_appearance;
  UOpSet copy_bufs;
  for (size_t i = 0; i < linear.nsrc(); i++) {
    const UOp& si = linear.src(i);
    std::vector<UOp> si_bufs;
    for (size_t k = 1; k < si.nsrc(); k++) {
      std::vector<UOp> bs;
      collect_bufs(si.src(k), bs);
      for (const UOp& b : bs)
        if (can_plan(b, held_bufs)) si_bufs.push_back(b);
    }
    for (const UOp& b : si_bufs) {
      if (!first_appearance.count(b)) first_appearance[b] = (int64_t)i, order.push_back(b);
      last_appearance[b] = (int64_t)i;
    }
    if (si.src(0).op() == Ops::COPY) copy_bufs.insert(si_bufs.begin(), si_bufs.end());
  }
  if (order.empty()) return linear;

  // separate copy and compute buffers into different lanes to avoid introducing dependencies (copy->compute->copy)
  using LaneKey = std::pair<std::string, int>;
  auto key = [&](const UOp& b) { return LaneKey{b.device().repr(), copy_bufs.count(b) ? 1 : 0}; };
  auto hold = [&](const UOp& b) -> int64_t {
    return copy_bufs.count(b) ? last_appearance[b] - first_appearance[b] + 1 : 0;
  };
  const int64_t block_size = 256;
  UOpMap<int64_t> nbytes;
  int64_t total = 0;
  for (const UOp& b : order) {
    nbytes[b] = round_up((int64_t)max_numel(b) * b.dtype().itemsize(), block_size);
    total += nbytes[b];
  }
  struct Event {
    int64_t pos;
    bool is_open;
    UOp buf;
  };
  std::vector<Event> events;
  for (const UOp& b : order) events.push_back({first_appearance[b], true, b});
  for (const UOp& b : order) events.push_back({last_appearance[b] + 1 + hold(b), false, b});
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.pos != b.pos ? a.pos < b.pos : (int)a.is_open < (int)b.is_open;
  });
  int64_t total_memory = total * 2;

  UOpMap<int64_t> offsets;
  std::vector<LaneKey> lane_order;
  std::map<LaneKey, std::pair<int64_t, std::unique_ptr<TLSFAllocator>>> peaks;
  std::map<LaneKey, Arg> lane_device;
  auto lane = [&](const UOp& b) -> std::pair<int64_t, std::unique_ptr<TLSFAllocator>>& {
    LaneKey k = key(b);
    auto it = peaks.find(k);
    if (it == peaks.end()) {
      lane_order.push_back(k);
      lane_device[k] = b.device();
      it = peaks.emplace(k, std::make_pair(0, std::make_unique<TLSFAllocator>(total_memory, 0, block_size, 32))).first;
    }
    return it->second;
  };
  for (const Event& e : events) {
    auto& [peak, alloc] = lane(e.buf);
    if (e.is_open)
      offsets[e.buf] = alloc->alloc(nbytes[e.buf]);
    else
      alloc->free(offsets[e.buf]);
    peak = std::max(peak, offsets[e.buf] + (int64_t)max_numel(e.buf) * e.buf.dtype().itemsize());
  }
  std::map<LaneKey, UOp> arenas;
  double omem = total / 1e6, nmem = 0;
  for (const LaneKey& k : lane_order) {
    int64_t sz = round_up(peaks[k].first, block_size);
    nmem += sz / 1e6;
    arenas[k] = UOp::new_buffer(lane_device[k], sz, dtypes::int8);
  }
  // each buffer becomes a SHRINK/BITCAST into a shared per-device-lane arena
  std::vector<std::pair<UOp, UOp>> replace_map;
  for (const UOp& b : order) {
    int64_t off = offsets[b], nb = (int64_t)max_numel(b) * b.dtype().itemsize();
    // arena[off:off+nb]: an in-bounds slice of one axis is its SHRINK (the slice's general path costs 13,000
    // instructions; MixinShapes.InBoundsSliceOfABufferIsItsShrink checks that both give the same node)
    UOp view = arenas[key(b)].shrink({OptPair(sint(off), sint(off + nb))}).bitcast(b.dtype());
    replace_map.emplace_back(b, view);
  }
  if (DEBUG >= 1 && omem != nmem)
    std::printf("memory reduced from %.2f MB -> %.2f MB, %zu -> %zu bufs\n", omem, nmem, order.size(), arenas.size());
  return linear.substitute(replace_map, "memory plan", true);
}

}  // namespace tg
