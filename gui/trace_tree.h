// The tree view on the left. Its keys step through the trace the way a rewrite debugger does: up/down go to the
// previous/next step (whatever is expanded), left/right to the previous/next match of the selected step, Enter
// expands or collapses. The main window does the moving (it also owns the graph's keys), so they agree.
#pragma once
#include <QTreeView>

namespace tv {

class TraceTree : public QTreeView {
  Q_OBJECT
 public:
  explicit TraceTree(QWidget* parent = nullptr);

 signals:
  void nav_key(int key);

 protected:
  void keyPressEvent(QKeyEvent* e) override;
};

}  // namespace tv
