#include "gui/trace_session.h"

#include "gui/label_facts.h"

#include <QString>
#include <algorithm>
#include <climits>
#include <future>
#include <thread>

#include "viz/reader/argfmt.h"

namespace tv {

using namespace tg::viz;

namespace {
// the session prepare() started for open() to take over
std::mutex g_prepared_mutex;
std::shared_ptr<TraceSession> g_prepared;
struct PreparedKey {
  std::string path;
  int64_t step = 0;
  size_t frame = 0;
} g_prepared_key;
}  // namespace

void TraceSession::start_warm(int64_t warm_step, size_t warm_frame) {
  // the warm thread takes the frames side before this returns, so that the first frame request (made as soon as
  // the window has the catalog) waits for the replay instead of starting one of its own
  std::promise<void> taken;
  auto is_taken = taken.get_future();
  warm_ = std::thread([this, warm_step, warm_frame, taken = std::move(taken)]() mutable {
    std::lock_guard<std::mutex> lock(frames_mutex_);
    taken.set_value();
    try {
      frames_trace_ = Trace::open_for_queries(path_);
      auto replay = std::make_unique<StepReplay>(*frames_trace_, warm_step);
      if (warm_frame < replay->num_frames()) replay->nodes(warm_frame ? warm_frame - 1 : 0);
      replays_.emplace_front(warm_step, std::move(replay));
    } catch (...) {  // the frame's own request reports it
    }
  });
  is_taken.wait();
}

void TraceSession::prepare(const std::string& path, int64_t warm_step, size_t warm_frame) {
  if (!warm_step) return;
  std::shared_ptr<TraceSession> s(new TraceSession());
  s->path_ = path;
  s->start_warm(warm_step, warm_frame);
  std::lock_guard<std::mutex> lock(g_prepared_mutex);
  g_prepared = std::move(s);
  g_prepared_key = {path, warm_step, warm_frame};
}

std::shared_ptr<TraceSession> TraceSession::open(const std::string& path, int64_t warm_step, size_t warm_frame) {
  std::shared_ptr<TraceSession> s, unused;
  {
    std::lock_guard<std::mutex> lock(g_prepared_mutex);
    if (g_prepared && g_prepared_key.path == path && g_prepared_key.step == warm_step &&
        g_prepared_key.frame == warm_frame)
      s = std::move(g_prepared);
    unused = std::move(g_prepared);  // joined below, outside the lock
  }
  unused.reset();
  if (!s) {
    s.reset(new TraceSession());
    s->path_ = path;
    if (warm_step) s->start_warm(warm_step, warm_frame);
  }
  s->ui_ = Trace::open(path, false);  // kernel sources are read when shown
  s->rules_ = s->ui_->rules();
  if (auto meta = s->ui_->meta(); meta.count("source_root")) s->source_root_ = meta["source_root"];
  for (size_t i = 0; i < s->rules_.size(); i++) s->rule_index_[s->rules_[i].id] = i;
  int64_t t0 = INT64_MAX;
  for (const auto& c : s->ui_->contexts()) t0 = std::min(t0, c.t_start);
  for (const auto& st : s->ui_->steps()) t0 = std::min(t0, st.t_start);
  if (!s->ui_->kernel_events().empty()) t0 = std::min(t0, s->ui_->kernel_events().front().t_start);
  // the profiler's events can come first (a buffer is allocated before the first kernel runs)
  if (!s->ui_->mem_events().empty()) t0 = std::min(t0, s->ui_->mem_events().front().t);
  if (!s->ui_->markers().empty()) t0 = std::min(t0, s->ui_->markers().front().t);
  if (!s->ui_->ranges().empty()) t0 = std::min(t0, s->ui_->ranges().front().t_start);
  s->t0_ = t0 == INT64_MAX ? 0 : t0;
  auto lower = [](const QString& q) { return q.toLower().toStdString(); };
  for (const auto& c : s->ui_->contexts()) s->ctx_hay_[c.id] = lower(QString::fromStdString(c.name));
  s->step_hay_.reserve(s->ui_->steps().size());
  for (const auto& st : s->ui_->steps())
    s->step_hay_[st.id] = lower(QString::fromStdString(st.name) + "\n" + QString::fromStdString(st.file) + ":" +
                                QString::number(st.line));
  for (const auto& r : s->rules_)
    s->rule_hay_[r.id] = lower(QString::fromStdString(r.file) + ":" + QString::number(r.line) + "\n" +
                               QString::fromStdString(r.matcher) + "\n" + QString::fromStdString(r.source));
  std::unordered_map<int64_t, std::string> device_of;           // context -> the device its program was compiled for
  std::unordered_map<std::string, std::string> device_by_name;  // a context whose program was compiled elsewhere
  for (const auto& pr : s->ui_->programs()) {
    if (pr.context > 0) device_of.emplace(pr.context, pr.device);
    device_by_name.emplace(strip_ansi(pr.name), pr.device);
  }
  for (const auto& c : s->ui_->contexts()) {
    if (c.steps.empty()) continue;
    auto dev = device_of.find(c.id);
    auto by_name = device_by_name.find(c.name);
    KernelRef ref{c.id, c.name,
                  dev != device_of.end()            ? dev->second
                  : by_name != device_by_name.end() ? by_name->second
                                                    : "",
                  c.name_ansi};
    auto [it, fresh] = s->kernels_.emplace(s->ui_->step(c.steps.front()).input_root, ref);
    if (!fresh && it->second.device.empty() && !ref.device.empty()) it->second = ref;
    // a PROGRAM holds the kernel's SINK as codegen left it: the output of one of its context's steps (a JIT graph's
    // CALLs run PROGRAMs)
    if (dev != device_of.end())
      for (int64_t st : c.steps)
        if (int64_t out = s->ui_->step(st).output_root) s->kernels_.emplace(out, ref);
  }
  return s;
}

TraceSession::~TraceSession() {
  if (warm_.joinable()) warm_.join();
}

const RuleRow* TraceSession::rule(int64_t id) const {
  auto it = rule_index_.find(id);
  return it == rule_index_.end() ? nullptr : &rules_[it->second];
}

void TraceSession::ensure(std::unique_ptr<Trace>& t) {
  // frame building reads steps one by one, matches, nodes: no second copy of the catalog (the UI trace's)
  if (!t) t = Trace::open_for_queries(path_);
}

LabelFacts& TraceSession::Frames::facts() {
  // memoised ranges and address spaces by node: bounded like the label caches
  if (!session.facts_ || session.facts_->size() > 8 * session.cache_bound_)
    session.facts_ = std::make_unique<LabelFacts>(trace);
  return *session.facts_;
}

StepReplay& TraceSession::Frames::replay(int64_t step) {
  auto& list = session.replays_;
  for (auto it = list.begin(); it != list.end(); ++it)
    if (it->first == step) {
      list.splice(list.begin(), list, it);
      return *list.front().second;
    }
  list.emplace_front(step, std::make_unique<StepReplay>(trace, step));
  while (list.size() > 8) list.pop_back();
  return *list.front().second;
}

}  // namespace tv
