// The "Code" tab. A kernel's codegen context (and every step in it) shows the kernel: its rendered source with
// syntax highlighting (C or LLVM IR), its linearized UOps, launch dims, estimates and recorded runs; "Step graphs"
// shows the selected step's input and output graphs as text, one node per line, sources first.
#pragma once
#include <QWidget>

#include "gui/trace_model.h"

class QPlainTextEdit;
class QLabel;
class QTabBar;

namespace tv {

class SourceHighlighter;

// a duration in the unit a person reads it in: "850 ns", "12.5 µs", "558 ms", "1.25 s"
QString duration_text(double ns);

class CodeView : public QWidget {
  Q_OBJECT
 public:
  enum Mode { Source = 0, Uops = 1, Graphs = 2 };
  explicit CodeView(QWidget* parent = nullptr);
  void set_session(SessionPtr s);
  void set_selection(const Selection& s);  // loads lazily, only while the tab is visible
  void set_mode(Mode m);
  Mode mode() const { return mode_; }
  bool loading() const { return loading_ || filling_; }
  QString title() const;
  QString text() const;

 signals:
  void load_failed(QString message);  // a kernel's source or a step's graphs could not be read

 protected:
  void showEvent(QShowEvent* e) override;

 private:
  void load();
  void set_text(const QString& text);  // in chunks, so a 200 KB text never holds the event loop
  SessionPtr session_;
  Selection sel_;
  Mode mode_ = Source;
  int64_t shown_ctx_ = -1, shown_step_ = -1;
  int shown_mode_ = -1;
  uint64_t gen_ = 0;
  bool loading_ = false, filling_ = false;
  uint64_t text_gen_ = 0;
  QLabel* title_;
  QTabBar* modes_;
  QPlainTextEdit* text_;
  SourceHighlighter* hl_;
};

}  // namespace tv
