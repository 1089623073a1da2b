// One opened trace. The reader's Trace is single-threaded (SQLite connection and caches), so the session keeps one
// Trace per thread role: the UI thread's (tree, rules, quick lookups), one for frame building (replay, labels) and
// one for slow queries (statistics over the whole trace, every match of a rule), each behind its own mutex.
// Reloading a trace makes a new session; jobs still running keep the old one alive through shared_ptr.
#pragma once
#include <algorithm>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "viz/reader/reader.h"
#include "viz/reader/replay.h"

namespace tv {

struct NodeText;
struct NodeLook;
class LabelFacts;
using NodeLookPtr = std::shared_ptr<const NodeLook>;

class TraceSession {
 public:
  // throws tg::viz::TraceError. warm_step: the step the window opens on (0: none); its replay is read and run to the
  // frame before warm_frame (where a jump lays out) on a thread of its own, which holds the frames side until it is
  // done: the catalog is read meanwhile, and the window builds its tree and selects while the replay goes on, so a
  // launch onto a deep frame waits for neither (~65 ms and ~120 ms on a training trace). A replay that fails is left
  // to the frame's own request to report
  static std::shared_ptr<TraceSession> open(const std::string& path, int64_t warm_step = 0, size_t warm_frame = 0);
  // starts open()'s warm replay of this path now, before the window exists (tinyviz's main calls it ahead of Qt's
  // start, ~30 ms): the next open() of the same path, step and frame takes it over; another open() drops it
  static void prepare(const std::string& path, int64_t warm_step, size_t warm_frame);
  ~TraceSession();  // joins the warm replay
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;
  const std::string& path() const { return path_; }
  tg::viz::Trace& ui() { return *ui_; }  // UI thread only
  const tg::viz::RuleRow* rule(int64_t id) const;
  const std::vector<tg::viz::RuleRow>& rules() const { return rules_; }
  int64_t time_origin() const { return t0_; }                      // earliest t_start of the trace
  const std::string& source_root() const { return source_root_; }  // where the recorded program's sources were
  // lower-case search texts, built with the session (off the UI thread): a context's name; a step's name and
  // file:line; a rule's file:line, matcher and source
  const std::string& context_hay(int64_t id) const { return ctx_hay_.at(id); }
  const std::string& step_hay(int64_t id) const { return step_hay_.at(id); }
  const std::unordered_map<int64_t, std::string>& rule_hay() const { return rule_hay_; }

  // The codegen context of a kernel, by the UOp that is its AST: the root a context's first step starts from (a CALL's
  // src[0], the reference's `codegen@` link). Contexts that compiled a program win over other contexts that happen to
  // start from the same node. Read-only after open(): any thread.
  struct KernelRef {
    int64_t context = 0;
    std::string name, device;  // the context's name (ANSI stripped); the device of its program ("" without one)
    std::string name_ansi;     // the name as recorded, in the reference's colours
  };
  const KernelRef* kernel_of(int64_t ast) const {
    auto it = kernels_.find(ast);
    return it == kernels_.end() ? nullptr : &it->second;
  }

  // frame building: exclusive use of the frame-side trace and its step replays
  struct Frames {
    tg::viz::Trace& trace;
    TraceSession& session;
    tg::viz::StepReplay& replay(int64_t step);
    // a node's label and expression, and how it draws, built once per session (make runs when it is not cached
    // yet). Bounded by twice the nodes of the biggest frame built (at least 4,000, ~1.2 MB each): stepping meets the
    // same ids again (a node the replay builds is named by its content), and frames keep what they use
    void frame_size(size_t nodes) { session.cache_bound_ = std::max(session.cache_bound_, 2 * nodes); }
    template <class Make>
    std::shared_ptr<const NodeText> node_text(int64_t id, Make&& make) {
      auto& c = session.node_text_;
      if (auto it = c.find(id); it != c.end()) return it->second;
      if (c.size() > session.cache_bound_) c.clear();
      return c.emplace(id, make()).first->second;
    }
    // keyed by the options a look depends on: folded consts, facts, long facts
    template <class Make>
    NodeLookPtr node_look(int64_t id, int variant, Make&& make) {
      auto& c = session.node_look_[variant & 7];
      if (auto it = c.find(id); it != c.end()) return it->second;
      if (c.size() > session.cache_bound_) c.clear();
      return c.emplace(id, make()).first->second;
    }
    LabelFacts& facts();  // the frames side's, cleared with the label caches
  };
  template <class F>
  auto with_frames(F&& f) {
    std::lock_guard<std::mutex> lock(frames_mutex_);
    ensure(frames_trace_);
    Frames fr{*frames_trace_, *this};
    return f(fr);
  }
  template <class F>
  auto with_queries(F&& f) {
    std::lock_guard<std::mutex> lock(queries_mutex_);
    if (!queries_trace_) queries_trace_ = tg::viz::Trace::open_for_queries(path_);  // SQL only: no catalog
    return f(*queries_trace_);
  }

 private:
  TraceSession() = default;
  void ensure(std::unique_ptr<tg::viz::Trace>& t);
  void start_warm(int64_t step, size_t frame);
  std::string path_;
  std::unique_ptr<tg::viz::Trace> ui_, frames_trace_, queries_trace_;
  std::vector<tg::viz::RuleRow> rules_;
  std::unordered_map<int64_t, size_t> rule_index_;
  int64_t t0_ = 0;
  std::string source_root_;
  std::unordered_map<int64_t, std::string> ctx_hay_, step_hay_, rule_hay_;
  std::unordered_map<int64_t, KernelRef> kernels_;  // AST root -> codegen context
  std::mutex frames_mutex_, queries_mutex_;
  std::thread warm_;  // the replay open() starts (holds frames_mutex_ while it runs)
  std::list<std::pair<int64_t, std::unique_ptr<tg::viz::StepReplay>>> replays_;  // most recent first
  std::unordered_map<int64_t, std::shared_ptr<const NodeText>> node_text_;       // frames side
  std::unordered_map<int64_t, NodeLookPtr> node_look_[8];                        // frames side, by variant
  std::unique_ptr<LabelFacts> facts_;                                              // frames side
  size_t cache_bound_ = 4'000;
};

using SessionPtr = std::shared_ptr<TraceSession>;

}  // namespace tv
