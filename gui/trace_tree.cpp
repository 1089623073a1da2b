#include "gui/trace_tree.h"

#include "gui/ansi_text.h"

#include <QHeaderView>
#include <QKeyEvent>

namespace tv {

TraceTree::TraceTree(QWidget* parent) : QTreeView(parent) {
  setUniformRowHeights(true);
  setAlternatingRowColors(false);
  setSelectionMode(QAbstractItemView::SingleSelection);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setIndentation(14);
  setItemDelegateForColumn(0, new AnsiDelegate(this));  // kernel names in the reference's colours
  setAllColumnsShowFocus(true);
  header()->setStretchLastSection(false);
  header()->setSectionResizeMode(QHeaderView::Interactive);
}

void TraceTree::keyPressEvent(QKeyEvent* e) {
  if (e->modifiers() & (Qt::AltModifier | Qt::ControlModifier)) return QTreeView::keyPressEvent(e);
  switch (e->key()) {
    case Qt::Key_Up:
    case Qt::Key_Down:
    case Qt::Key_Left:
    case Qt::Key_Right:
      emit nav_key(e->key());
      return;
    case Qt::Key_Return:
    case Qt::Key_Enter:
      if (currentIndex().isValid()) {
        QModelIndex i = currentIndex().siblingAtColumn(0);
        setExpanded(i, !isExpanded(i));
      }
      return;
    default:
      QTreeView::keyPressEvent(e);
  }
}

}  // namespace tv
