// The right panel: the rule that fired (full source, copyable file:line, duration), the before/after text of the
// matched node as a coloured line diff, the step (call site, flags, depth) and its context; below, the node clicked
// in the graph.
#pragma once
#include <QWidget>

#include "gui/frame_loader.h"
#include "gui/trace_model.h"

class QLineEdit;
class QTextBrowser;

namespace tv {

class RulePanel : public QWidget {
  Q_OBJECT
 public:
  explicit RulePanel(QWidget* parent = nullptr);
  void set_session(SessionPtr s);
  void show_selection(const Selection& s, const tg::viz::MatchRow* m);  // at once, from the tree's data
  void show_frame(const FrameResultPtr& r);                             // adds the diff once the frame is built
  void show_node(const FrameResultPtr& r, int64_t id);
  QString site() const;  // the file:line shown (empty: none)
  QString text() const;  // plain text of the panel (tests)

 private:
  QString step_html(int64_t step) const;
  SessionPtr session_;
  Selection sel_;
  QLineEdit* site_;
  QTextBrowser* main_;
  QTextBrowser* node_;
  QString head_html_;
};

}  // namespace tv
