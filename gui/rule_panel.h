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
  // a rule alone (the Stats tab's selected rule): where it is written, its matcher and source
  void show_rule(int64_t rule);
  void set_node_pane(bool on);  // the clicked node's pane: beside the graph only
  bool node_pane_shown() const;
  // the frame's added, removed or rebuilt nodes (which: "added", "removed", "rebuilt") listed under the graph, each
  // a link that shows the node (node_link); the counts above link here
  void show_list(const FrameResultPtr& r, const QString& which);
  QString site() const;  // the file:line shown (empty: none)
  QString text() const;  // plain text of the panel (tests)
  QString node_text() const;  // plain text of the node pane (tests)
  // opens the rule's file at its line: $VISUAL, else $EDITOR, with +LINE FILE; else the desktop's handler for the file.
  // A relative path is taken from the recording's source root (the trace's meta), else from the current directory.
  // false: no file to open (the message says why)
  bool open_site(QString* message = nullptr);

 signals:
  void node_link(qint64 id);  // a node of a list was clicked

 private:
  QString step_html(int64_t step) const;
  QString source_html(const tg::viz::RuleRow& r) const;  // recorded, else read from the checkout
  FrameResultPtr frame_;  // the frame show_frame showed
  SessionPtr session_;
  Selection sel_;
  QLineEdit* site_;
  QTextBrowser* main_;
  QTextBrowser* node_;
  QString head_html_;
};

}  // namespace tv
