// Gets frames to the graph view without ever blocking the UI thread:
//   request(step, k) -> a frame job on a worker (replay, labels, and an incremental layout derived from a cached
//   neighbouring frame when most nodes can keep their place) -> or, for a fresh layout, a Graphviz job on the layout
//   thread (when its estimated work is small enough, layout.h) under a time budget; past the budget (or on cancel)
//   the simple layered layout is shown instead and the step keeps using it. A frame jumped to with no cached
//   neighbour is derived from a fresh layout of the frame before it, so it shows what its match removed.
// Results are cached per (step, frame); stale jobs (the user moved on) are skipped before they start and their
// results are not shown.
#pragma once
#include <QObject>
#include <QString>
#include <QTimer>
#include <atomic>
#include <memory>

#include "gui/frame_graph.h"
#include "gui/layout.h"
#include "gui/trace_session.h"

class QThreadPool;

namespace tv {

struct FrameResult {
  FrameGraphPtr graph;
  std::shared_ptr<const Layout> layout;
  std::vector<Pt> ghost_pos;  // per graph->ghosts; only those with ghost_shown
  std::vector<char> ghost_shown;
  int64_t family = 0;   // layouts derived from one another share a family (same coordinates)
  double build_ms = 0;  // replay + labels
  QString note;         // e.g. why the fallback layout is shown
};
using FrameResultPtr = std::shared_ptr<const FrameResult>;

class FrameLoader : public QObject {
  Q_OBJECT
 public:
  static constexpr size_t kMaxDotNodes = 1500;
  explicit FrameLoader(QObject* parent = nullptr);
  ~FrameLoader() override;

  void set_session(SessionPtr s);  // drops caches
  void set_options(const FrameOptions& o);
  const FrameOptions& options() const { return opt_; }
  void set_budget_ms(int ms) { budget_ms_ = ms; }
  int budget_ms() const { return budget_ms_; }

  void request(int64_t step, size_t frame);
  // build this frame on the worker ahead of its request (the next match while the user looks at this one), when it
  // derives from a cached neighbour; nothing while a request is under way. A request for another frame cancels it.
  void prefetch(int64_t step, size_t frame);
  void relayout();       // the current frame from scratch (Graphviz), dropping its cached layout
  void cancel_layout();  // stop waiting for Graphviz: show the simple layout now
  bool busy() const { return busy_; }
  // a job for this frame is running, with the current options (a request for it waits for that job)
  bool on_its_way(int64_t step, size_t frame) const {
    return busy_ && session_ && step == step_ && frame == frame_ && opt_ == job_opt_;
  }
  FrameResultPtr cached(int64_t step, size_t frame) const;
  static bool workers_idle();  // no frame, layout or query job running (else quitting should not wait for them)

  struct Shared;  // state shared with worker jobs (outlives the loader)

 signals:
  void frame_ready(tv::FrameResultPtr r);
  void frame_failed(qint64 step, qulonglong frame, QString message);
  void progress(QString text);  // empty: idle

 private:
  void start_job(bool force_fallback, bool force_full, bool exact);
  void deliver(uint64_t gen, FrameResultPtr r);
  void fail(uint64_t gen, QString msg);
  void on_budget();
  SessionPtr session_;
  FrameOptions opt_, job_opt_;  // job_opt_: what the frame on its way is built with
  std::shared_ptr<Shared> sh_;
  QThreadPool* frame_pool_;
  QThreadPool* dot_pool_;
  QTimer budget_timer_;
  int budget_ms_ = 1500;
  bool busy_ = false, fallback_started_ = false;
  int64_t step_ = 0;
  size_t frame_ = 0;
  uint64_t gen_ = 0, delivered_ = 0;
  std::pair<int64_t, size_t> prefetching_{0, 0};
};

}  // namespace tv

Q_DECLARE_METATYPE(tv::FrameResultPtr)
