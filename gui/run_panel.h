// The right panel beside the Timeline and Code tabs: what a kernel run did (start, duration, device, GFLOPS and GB/s,
// launch dims, the buffers it read and wrote with dtype and size, its variables) and what its kernel is (the
// program's estimates and all its runs). The reference's VIZ shows the same for a clicked run. Links: a buffer marks
// its life on the memory lane, "source" and "graph" open the kernel's codegen context in the Code and Graph tabs.
#pragma once
#include <QWidget>

#include "gui/trace_model.h"

class QTextBrowser;

namespace tv {

class TimelineView;

class RunPanel : public QWidget {
  Q_OBJECT
 public:
  explicit RunPanel(const TimelineView* timeline, QWidget* parent = nullptr);
  void set_session(SessionPtr s);
  void show_run(int64_t event);        // index into Trace::kernel_events()
  void show_program(int64_t context);  // the kernel of a codegen context (the Code tab); false: it has none
  void show_hint(const QString& text);
  int64_t run() const { return run_; }
  QString text() const;  // plain text (tests)

 signals:
  void open_buffer(qlonglong buffer);    // mark it on its memory lane
  void open_source(qlonglong context);   // the Code tab on the kernel
  void open_graph(qlonglong context);    // the Graph tab on the kernel's codegen
  void open_run(qlonglong event);        // another run of the kernel, on the timeline

 private:
  QString runs_html(int64_t program, int64_t current) const;
  const TimelineView* timeline_;
  SessionPtr session_;
  QTextBrowser* body_;
  int64_t run_ = -1;
};

}  // namespace tv
