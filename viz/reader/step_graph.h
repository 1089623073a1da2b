// The nodes one step's replay works on, numbered densely from 0: the recorded nodes under the step's rows (input,
// output, every match's before and after) and the nodes the replay builds. Replaying a deep top-down step builds
// hundreds of thousands of nodes (the last of 17,913 matches of a training run's biggest step: ~560,000), so they are
// flat records with their srcs in one array and an open-addressing content index, not trace Nodes in hash maps.
// A built node gets a trace id (Trace::intern_node) only when a frame holding it is asked for.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "viz/reader/reader.h"

namespace tg::viz {

class StepGraph {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  explicit StepGraph(Trace& t) : t_(t) {}
  uint32_t load(int64_t trace_id);  // a recorded node, with everything under it
  // the node with this content, built if there is none (srcs are local ids)
  uint32_t intern(int op, int dtype, int64_t arg, int64_t tag, const uint32_t* src, uint32_t nsrc);
  // `n` with new srcs; when a src changed dtype, a recorded node of the same content and any dtype is taken (the
  // rebuilt node re-derives its dtype, as the engine's does)
  uint32_t rebuild(uint32_t n, const uint32_t* new_src);
  int64_t trace_id(uint32_t n);  // interns built nodes in the trace

  size_t size() const { return nodes_.size(); }
  int op(uint32_t n) const { return nodes_[n].op; }
  int dtype(uint32_t n) const { return nodes_[n].dtype; }
  int64_t arg(uint32_t n) const { return nodes_[n].arg; }
  int64_t tag(uint32_t n) const { return nodes_[n].tag; }
  int64_t known_id(uint32_t n) const { return nodes_[n].id; }  // 0: a built node not interned in the trace yet
  uint32_t nsrc(uint32_t n) const { return nodes_[n].nsrc; }
  const uint32_t* src(uint32_t n) const { return srcs_.data() + nodes_[n].src0; }  // until the next intern

 private:
  struct N {
    int op, dtype;
    int64_t arg, tag;
    int64_t id;  // trace id, 0 until trace_id() interns a built node
    uint64_t hash;  // of the content with the dtype
    bool recorded;
    uint32_t src0, nsrc;
  };
  static uint64_t hash_of(int op, int dtype, int64_t arg, int64_t tag, const uint32_t* src, uint32_t nsrc);
  // slots: (hash's high 32 bits << 32) | (local id + 1); 0 empty
  uint32_t find(const std::vector<uint64_t>& table, bool with_dtype, uint64_t h, int op, int dtype, int64_t arg,
                int64_t tag, const uint32_t* src, uint32_t nsrc) const;
  void insert(std::vector<uint64_t>& table, size_t& used, uint64_t h, uint32_t n, bool with_dtype);
  // looked: intern found no node with this content
  uint32_t add(int op, int dtype, int64_t arg, int64_t tag, int64_t id, const uint32_t* src, uint32_t nsrc,
               bool looked = false);
  uint64_t any_hash(uint32_t n) const;
  Trace& t_;
  std::vector<N> nodes_;
  std::vector<uint32_t> srcs_;
  std::vector<uint64_t> content_, any_;  // any_: recorded nodes, by their content without the dtype
  size_t content_used_ = 0, any_used_ = 0;
  std::vector<uint32_t> scratch_;
  std::unordered_map<int64_t, uint32_t> local_;  // trace id -> local id
};

}  // namespace tg::viz
