#include "gui/ansi_text.h"

#include <QApplication>
#include <QPainter>
#include <atomic>

namespace tv {

namespace {
std::atomic<bool> g_colors{true};
// the reference VIZ's palettes: codes 30-37 and their bright 90-97
const QRgb kAnsi[] = {0xb3b3b3, 0xff6666, 0x66b366, 0xffff66, 0x6666ff, 0xff66ff, 0x66ffff, 0xffffff};
const QRgb kAnsiLight[] = {0xd9d9d9, 0xff9999, 0x99cc99, 0xffff99, 0x9999ff, 0xff99ff, 0xccffff, 0xffffff};
}  // namespace

bool kernel_colors() { return g_colors; }
void set_kernel_colors(bool on) { g_colors = on; }
bool has_ansi(const std::string& s) { return s.find('\x1b') != std::string::npos; }

std::vector<AnsiRun> ansi_runs(const std::string& s) {
  std::vector<AnsiRun> out;
  QColor cur;
  std::string text;
  auto flush = [&] {
    if (text.empty()) return;
    out.push_back({QString::fromStdString(text), g_colors ? cur : QColor()});
    text.clear();
  };
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] != '\x1b' || i + 1 >= s.size() || s[i + 1] != '[') {
      text += s[i];
      continue;
    }
    size_t e = i + 2;
    while (e < s.size() && (std::isdigit((unsigned char)s[e]) || s[e] == ';')) e++;
    if (e >= s.size()) break;  // a cut escape: dropped
    flush();
    if (s[e] == 'm') {
      int code = std::atoi(s.substr(i + 2, e - i - 2).c_str());
      if (code >= 30 && code <= 37) cur = QColor::fromRgb(kAnsi[code - 30]);
      else if (code >= 90 && code <= 97) cur = QColor::fromRgb(kAnsiLight[code - 90]);
      else cur = QColor();
    }
    i = e;
  }
  flush();
  return out;
}

QString ansi_html(const std::string& s) {
  QString h;
  for (const AnsiRun& r : ansi_runs(s))
    h += r.color.isValid() ? QString("<span style='color:%1'>%2</span>").arg(r.color.name(), r.text.toHtmlEscaped())
                           : r.text.toHtmlEscaped();
  return h;
}

double draw_ansi(QPainter& p, double x, double baseline, const std::vector<AnsiRun>& runs, double max_width) {
  QFontMetricsF fm(p.font());
  QPen pen = p.pen();
  double x0 = x;
  for (const AnsiRun& r : runs) {
    double left = max_width - (x - x0);
    if (left <= 0) break;
    QString t = fm.horizontalAdvance(r.text) <= left ? r.text : fm.elidedText(r.text, Qt::ElideRight, left);
    p.setPen(r.color.isValid() ? QPen(r.color) : pen);
    p.drawText(QPointF(x, baseline), t);
    x += fm.horizontalAdvance(t);
    if (t != r.text) break;
  }
  p.setPen(pen);
  return x - x0;
}

void AnsiDelegate::paint(QPainter* p, const QStyleOptionViewItem& opt, const QModelIndex& index) const {
  QVariant v = index.data(kAnsiRole);
  if (!v.isValid() || !g_colors) return QStyledItemDelegate::paint(p, opt, index);
  // the item as usual without its text, then the text in its colours
  QStyleOptionViewItem o = opt;
  initStyleOption(&o, index);
  o.text.clear();
  const QWidget* w = opt.widget;
  QStyle* style = w ? w->style() : QApplication::style();
  style->drawControl(QStyle::CE_ItemViewItem, &o, p, w);
  QRect r = style->subElementRect(QStyle::SE_ItemViewItemText, &o, w);
  p->save();
  p->setFont(o.font);
  p->setPen(o.palette.color(opt.state & QStyle::State_Selected ? QPalette::HighlightedText : QPalette::Text));
  QFontMetricsF fm(o.font);
  double base = r.top() + (r.height() - fm.height()) / 2 + fm.ascent();
  draw_ansi(*p, r.left() + 2, base, ansi_runs(v.toString().toStdString()), r.width() - 4);
  p->restore();
}

}  // namespace tv
