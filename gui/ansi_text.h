// Kernel names as the reference prints them: tinygrad colours each dimension of a kernel name by its axis type
// (global blue, local cyan, reduce red, upcast yellow, unroll magenta, ...) with ANSI escapes, and its VIZ keeps the
// colours (index.js parseColors, with its two palettes). Traces record the names with the escapes; these helpers
// turn them into coloured runs for painting, HTML for the panels, and a tree delegate. View › Kernel-name colours
// turns them off everywhere (QSettings view/kernel_colors).
#pragma once
#include <QColor>
#include <QString>
#include <QStyledItemDelegate>
#include <string>
#include <vector>

class QPainter;

namespace tv {

struct AnsiRun {
  QString text;
  QColor color;  // invalid: the default colour
};
std::vector<AnsiRun> ansi_runs(const std::string& s);  // escapes other than colours are dropped
QString ansi_html(const std::string& s);               // <span style='color:..'> runs, escaped; plain when turned off
bool has_ansi(const std::string& s);
bool kernel_colors();  // the setting (default on)
void set_kernel_colors(bool on);
// draws the runs from (x, baseline), the default colour being the painter's pen; returns the advance
double draw_ansi(QPainter& p, double x, double baseline, const std::vector<AnsiRun>& runs, double max_width);

// the tree's names: a kernel's in its colours (Qt::UserRole + 20 holds the recorded name with its escapes), the
// others elided in the middle (a match row keeps its site and the ops it changed; the tooltip has it all)
class AnsiDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  static constexpr int kAnsiRole = Qt::UserRole + 20;
  void paint(QPainter* p, const QStyleOptionViewItem& opt, const QModelIndex& index) const override;

 protected:
  void initStyleOption(QStyleOptionViewItem* o, const QModelIndex& i) const override {
    QStyledItemDelegate::initStyleOption(o, i);
    o->textElideMode = Qt::ElideMiddle;
  }
};

}  // namespace tv
