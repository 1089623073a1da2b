// Port of tinygrad/schedule/rangeify.py: the kernel graph. get_kernel_graph turns the tensor graph of one function
// into a SINK of kernel CALLs: early cleanups, copies to stores, rangeify (indexing.h), buffer removal by cost,
// buffer limits, STAGE -> BUFFER + STORE, and the split into kernels.
#pragma once
#include <cstdint>

#include "lib/helpers.h"
#include "lib/schedule/indexing.h"

namespace tg {

extern ContextVar SPLIT_REDUCEOP, DEBUG_RANGEIFY, MAX_KERNEL_BUFFERS, OPENPILOT_HACKS, FLOAT16;

// movement ops on INDEX, and moved past AFTER/END
const PatternMatcher& pm_mops();
// pm_mops' first rule: INDEX idx of the movement op r (idx.src(0)) as an INDEX of r's src (null: it does not apply)
UOp mop_index(const UOp& r, const UOp& idx);
const PatternMatcher& pm_fold_moved_after();  // ctx: UOpMap<UOp>
const PatternMatcher& earliest_rewrites();
const PatternMatcher& pm_gate_substitute();
const PatternMatcher& pm_const_buffer_folding();
const PatternMatcher& pm_remove_bufferize();
const PatternMatcher& pm_no_indexing_calls();
const PatternMatcher& pm_limit_bufs();  // ctx: LimitBufsContext
const PatternMatcher& pm_flatten_bufferize();
const PatternMatcher& pm_add_buffers();    // ctx: int64_t (next BUFFER slot)
const PatternMatcher& to_define_global();  // ctx: LocalAddBufferContext
const PatternMatcher& rangeify_codegen();  // ctx: LocalAddBufferContext
const PatternMatcher& pm_add_param_range_tags();
const PatternMatcher& split_kernels();
const PatternMatcher& pm_copy_to_store();  // ctx: int64_t (next BUFFER slot)

struct LimitBufsContext {
  UOpMap<std::shared_ptr<const UOpSet>> buf_cache;
  int64_t range_idx = 0;
};

struct LocalAddBufferContext {
  int64_t dg = 0;
  std::vector<std::pair<UOp, UOp>> map;  // insertion ordered dict
  int64_t range = 0;
  Arg opts;  // None or a tuple of Opts
  const UOp* find(const UOp& k) const {
    for (const auto& [a, b] : map)
      if (a == k) return &b;
    return nullptr;
  }
};

// UOp.call for an opaque body (SINK, PROGRAM, LINEAR, COPY, CUSTOM_FUNCTION): CALL(body, *srcs) with a CallInfo
UOp make_call(const UOp& body, std::span<const UOp> srcs);

// get_kernel_graph (rewrite_group(new_ctx=False)): the tensor graph of one function -> SINK of kernel CALLs
UOp get_kernel_graph(const UOp& sink);

}  // namespace tg
