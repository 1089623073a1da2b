#include "viz/reader/step_graph.h"

#include <algorithm>

namespace tg::viz {

uint64_t StepGraph::hash_of(int op, int dtype, int64_t arg, int64_t tag, const uint32_t* src, uint32_t nsrc) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  auto mix = [&](uint64_t x) { h = (h ^ x) * 0xff51afd7ed558ccdull, h ^= h >> 32; };
  mix((uint64_t)op), mix((uint64_t)dtype), mix((uint64_t)arg), mix((uint64_t)tag);
  for (uint32_t i = 0; i < nsrc; i++) mix(src[i]);
  return h;
}

uint64_t StepGraph::any_hash(uint32_t n) const {
  const N& x = nodes_[n];
  return hash_of(x.op, -1, x.arg, x.tag, src(n), x.nsrc);
}

static uint64_t slot_of(uint64_t h, uint32_t n) { return (h & 0xffffffff00000000ull) | (n + 1); }

uint32_t StepGraph::find(const std::vector<uint64_t>& table, bool with_dtype, uint64_t h, int op, int dtype, int64_t arg,
                         int64_t tag, const uint32_t* src, uint32_t nsrc) const {
  if (table.empty()) return kNone;
  size_t mask = table.size() - 1;
  for (size_t i = h & mask; table[i]; i = (i + 1) & mask) {
    if ((table[i] ^ h) >> 32) continue;  // another hash
    uint32_t c = (uint32_t)table[i] - 1;
    const N& x = nodes_[c];
    if ((!with_dtype || x.dtype == dtype) && x.op == op && x.arg == arg && x.tag == tag && x.nsrc == nsrc &&
        std::equal(src, src + nsrc, srcs_.data() + x.src0))
      return c;
  }
  return kNone;
}

void StepGraph::insert(std::vector<uint64_t>& table, size_t& used, uint64_t h, uint32_t n, bool with_dtype) {
  if (2 * (used + 1) > table.size()) {
    std::vector<uint64_t> old(std::max<size_t>(64, table.size() * 2), 0);
    old.swap(table);
    size_t mask = table.size() - 1;
    for (uint64_t slot : old)
      if (slot) {
        uint32_t c = (uint32_t)slot - 1;
        uint64_t hh = with_dtype ? nodes_[c].hash : any_hash(c);
        size_t i = hh & mask;
        while (table[i]) i = (i + 1) & mask;
        table[i] = slot;
      }
  }
  size_t mask = table.size() - 1, i = h & mask;
  while (table[i]) i = (i + 1) & mask;
  table[i] = slot_of(h, n);
  used++;
}

uint32_t StepGraph::add(int op, int dtype, int64_t arg, int64_t tag, int64_t id, const uint32_t* src, uint32_t nsrc,
                        bool looked) {
  scratch_.assign(src, src + nsrc);  // src may point into srcs_
  uint32_t n = (uint32_t)nodes_.size();
  uint64_t h = hash_of(op, dtype, arg, tag, scratch_.data(), nsrc);
  // the first node with a content keeps it, but a recorded node takes it from a built one (as Trace::index_content)
  uint32_t old = looked ? kNone : find(content_, true, h, op, dtype, arg, tag, scratch_.data(), nsrc);
  nodes_.push_back({op, dtype, arg, tag, id, h, id > 0, (uint32_t)srcs_.size(), nsrc});
  srcs_.insert(srcs_.end(), scratch_.begin(), scratch_.end());
  if (old == kNone) insert(content_, content_used_, h, n, true);
  else if (id > 0 && !nodes_[old].recorded) {
    size_t mask = content_.size() - 1, i = h & mask;
    while (content_[i] != slot_of(h, old)) i = (i + 1) & mask;
    content_[i] = slot_of(h, n);
  }
  if (id > 0) {
    uint64_t ha = hash_of(op, -1, arg, tag, scratch_.data(), nsrc);
    if (find(any_, false, ha, op, dtype, arg, tag, scratch_.data(), nsrc) == kNone) insert(any_, any_used_, ha, n, false);
  }
  return n;
}

uint32_t StepGraph::load(int64_t trace_id) {
  if (auto it = local_.find(trace_id); it != local_.end()) return it->second;
  t_.node(trace_id);  // loads the node and everything under it, or throws naming what is wrong
  std::vector<std::pair<int64_t, size_t>> st{{trace_id, 0}};
  std::vector<uint32_t> srcs;
  while (!st.empty()) {
    auto [id, i] = st.back();
    const Node& nd = t_.node(id);
    if (i < nd.src.size()) {
      st.back().second++;
      if (!local_.count(nd.src[i])) st.push_back({nd.src[i], 0});
      continue;
    }
    st.pop_back();
    if (local_.count(id)) continue;  // reached twice below the same user
    srcs.clear();
    for (int64_t s : nd.src) srcs.push_back(local_.at(s));
    local_[id] = add(nd.op, nd.dtype, nd.arg, nd.tag, id, srcs.data(), (uint32_t)srcs.size());
  }
  return local_.at(trace_id);
}

uint32_t StepGraph::intern(int op, int dtype, int64_t arg, int64_t tag, const uint32_t* src, uint32_t nsrc) {
  uint32_t found = find(content_, true, hash_of(op, dtype, arg, tag, src, nsrc), op, dtype, arg, tag, src, nsrc);
  return found != kNone ? found : add(op, dtype, arg, tag, 0, src, nsrc, true);
}

uint32_t StepGraph::rebuild(uint32_t n, const uint32_t* new_src) {
  const N x = nodes_[n];
  bool dtype_changed = false;
  for (uint32_t i = 0; i < x.nsrc; i++) dtype_changed |= nodes_[srcs_[x.src0 + i]].dtype != nodes_[new_src[i]].dtype;
  if (dtype_changed) {
    uint32_t found = find(any_, false, hash_of(x.op, -1, x.arg, x.tag, new_src, x.nsrc), x.op, 0, x.arg, x.tag, new_src,
                          x.nsrc);
    if (found != kNone) return found;
    // a recorded node outside this step's rows that another replay loaded
    std::vector<int64_t> ids;
    scratch_.assign(new_src, new_src + x.nsrc);
    std::vector<uint32_t> srcs = scratch_;
    for (uint32_t s : srcs) ids.push_back(trace_id(s));
    if (int64_t id = t_.find_any_dtype(x.op, x.arg, x.tag, ids)) return load(id);
    return intern(x.op, x.dtype, x.arg, x.tag, srcs.data(), x.nsrc);
  }
  return intern(x.op, x.dtype, x.arg, x.tag, new_src, x.nsrc);
}

int64_t StepGraph::trace_id(uint32_t root) {
  if (nodes_[root].id) return nodes_[root].id;
  std::vector<std::pair<uint32_t, uint32_t>> st{{root, 0}};
  std::vector<int64_t> ids;
  while (!st.empty()) {
    auto [n, i] = st.back();
    if (i < nodes_[n].nsrc) {
      st.back().second++;
      uint32_t s = srcs_[nodes_[n].src0 + i];
      if (!nodes_[s].id) st.push_back({s, 0});
      continue;
    }
    st.pop_back();
    N& x = nodes_[n];
    if (x.id) continue;
    ids.clear();
    for (uint32_t j = 0; j < x.nsrc; j++) ids.push_back(nodes_[srcs_[x.src0 + j]].id);
    x.id = t_.intern_node(x.op, x.dtype, x.arg, x.tag, ids);
    if (x.id > 0) local_.emplace(x.id, n);
  }
  return nodes_[root].id;
}

}  // namespace tg::viz
