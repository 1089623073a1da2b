// The "Code" tab. Kernels (rendered source, linearized UOps) are not recorded in traces yet; until they are it shows
// the selected step's input and output graphs as text, one node per line, sources first.
#pragma once
#include <QWidget>

#include "gui/trace_model.h"

class QPlainTextEdit;
class QLabel;

namespace tv {

class CodeView : public QWidget {
  Q_OBJECT
 public:
  explicit CodeView(QWidget* parent = nullptr);
  void set_session(SessionPtr s);
  void set_selection(const Selection& s);  // loads lazily, only while the tab is visible
  bool loading() const { return loading_; }
  QString text() const;

 protected:
  void showEvent(QShowEvent* e) override;

 private:
  void load();
  SessionPtr session_;
  Selection sel_;
  int64_t shown_step_ = -1;
  uint64_t gen_ = 0;
  bool loading_ = false;
  QLabel* title_;
  QPlainTextEdit* text_;
};

}  // namespace tv
