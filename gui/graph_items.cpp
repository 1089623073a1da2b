#include "gui/graph_items.h"

#include <QHash>
#include <QPainter>
#include <QStaticText>
#include <QStyleOptionGraphicsItem>
#include <algorithm>
#include <cmath>

#include "gui/op_style.h"

namespace tv {

namespace {
constexpr double kOutline = 4;  // room outside the box for marks and highlights

// Laid-out label lines, shared by every node and frame: shaping text is most of what a frame's first paint costs
// (a 1,000-node frame showed 400 labels at once: 100-180 ms with drawText, a few ms from this cache). Labels repeat
// a lot ("dtypes.float", "ADD", folded consts), across nodes and from one frame to the next.
const QStaticText& static_text(const std::string& line, int style) {
  static QHash<QString, QStaticText> cache;
  QString key = QString::fromStdString(line);
  key.prepend(QChar('0' + style));
  auto it = cache.find(key);
  if (it != cache.end()) return *it;
  if (cache.size() > 4000) cache.clear();  // bounded: a few MB
  static const QFont font = graph_font(false), bold = graph_font(true), struck = [] {
    QFont f = graph_font(true);
    f.setStrikeOut(true);
    return f;
  }();
  QStaticText st(key.mid(1));
  st.setTextFormat(Qt::PlainText);
  st.prepare(QTransform(), style == 0 ? font : style == 1 ? bold : struck);
  return *cache.insert(key, st);
}
}  // namespace

NodeItem::NodeItem(const GNode& n, int index, bool ghost) : n_(n), index_(index), ghost_(ghost) {
  fill_ = op_color(n.op);
  text_ = fill_.lightnessF() < 0.5 ? QColor(0xf0, 0xf0, 0xf0) : QColor(0x14, 0x15, 0x1c);
  setZValue(ghost ? -1 : 1);
  setAcceptHoverEvents(false);
  // no pixmap per node: stepping draws every node of a new frame once, and allocating and filling ~2,000 pixmaps
  // on that first paint cost more than drawing them directly
  setCacheMode(QGraphicsItem::NoCache);
}

QRectF NodeItem::boundingRect() const {
  return QRectF(-n_.w / 2 - kOutline, -n_.h / 2 - kOutline, n_.w + 2 * kOutline, n_.h + 2 * kOutline);
}

void NodeItem::set_hi(Hi h) {
  if (h == hi_) return;
  hi_ = h;
  update();
}

void NodeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget*) {
  QRectF r(-n_.w / 2, -n_.h / 2, n_.w, n_.h);
  double lod = opt->levelOfDetailFromTransform(p->worldTransform());
  p->setRenderHint(QPainter::Antialiasing, lod >= 0.35);  // a few pixels: crisp is as good, and cheaper
  p->setOpacity(hi_ == Hi::dim ? 0.28 : 1.0);
  if (ghost_) {  // removed by the match: dashed red, its label struck through
    p->setBrush(QColor(0x3a, 0x24, 0x2a));
    p->setPen(QPen(mark::removed, 2, Qt::DashLine));
    p->drawRoundedRect(r, 4, 4);
  } else {
    p->setBrush(fill_);
    QPen pen(fill_.darker(170), 1);
    if (n_.mark == Mark::added) pen = QPen(mark::added, 3);
    if (n_.mark == Mark::changed) pen = QPen(mark::changed, 3);
    p->setPen(pen);
    p->drawRoundedRect(r, 4, 4);
    if (n_.is_root) {  // the frame's root: a second thin line inside
      p->setPen(QPen(fill_.darker(220), 1));
      p->setBrush(Qt::NoBrush);
      p->drawRoundedRect(r.adjusted(2.5, 2.5, -2.5, -2.5), 3, 3);
    }
  }
  if (hi_ == Hi::selected || hi_ == Hi::source || hi_ == Hi::user) {
    QColor c = hi_ == Hi::selected ? QColor(Qt::white) : hi_ == Hi::source ? mark::sources : mark::users;
    p->setPen(QPen(c, hi_ == Hi::selected ? 2.5 : 2));
    p->setBrush(Qt::NoBrush);
    p->drawRoundedRect(r.adjusted(-3, -3, 3, 3), 6, 6);
  }
  if (lod < 0.35) return;  // too small to read: boxes only
  static const QFont font = graph_font(false), bold = graph_font(true);
  static const double lh = QFontMetricsF(font).height();
  double y = r.top() + kNodePadY;
  for (size_t i = 0; i < n_.lines.size(); i++) {
    QColor c = ghost_ ? QColor(0xe0, 0xa0, 0xa0) : text_;
    if (n_.folded_from >= 0 && (int)i >= n_.folded_from)
      c = text_.lightnessF() > 0.5 ? c.darker(130) : QColor(0x50, 0x58, 0x78);
    p->setPen(c);
    int style = i == 0 ? (ghost_ ? 2 : 1) : 0;
    p->setFont(style == 0 ? font : bold);  // the static text carries its own font; this keeps metrics consistent
    const QStaticText& st = static_text(n_.lines[i], style);
    QSizeF sz = st.size();
    p->drawStaticText(QPointF(r.left() + (r.width() - sz.width()) / 2, y + (lh - sz.height()) / 2), st);
    y += lh;
  }
}

EdgeItem::EdgeItem(const EdgePath& e, int port, bool show_port, bool crowded, bool dashed)
    : port_(port), show_port_(show_port), crowded_(crowded), dashed_(dashed) {
  setZValue(0);
  const auto& p = e.pts;
  if (p.empty()) return;
  path_.moveTo(p[0].x, p[0].y);
  if (e.bezier)
    for (size_t i = 1; i + 2 < p.size(); i += 3)
      path_.cubicTo(p[i].x, p[i].y, p[i + 1].x, p[i + 1].y, p[i + 2].x, p[i + 2].y);
  else
    for (size_t i = 1; i < p.size(); i++) path_.lineTo(p[i].x, p[i].y);
  // arrowhead along the direction the path arrives in: from the last distinct point before the tip
  QPointF tip(p.back().x, p.back().y), d(0, -1);
  for (size_t i = p.size() - 1; i-- > 0;) {
    QPointF q = tip - QPointF(p[i].x, p[i].y);
    double len = std::hypot(q.x(), q.y());
    if (len > 0.5) {
      d = q / len;
      break;
    }
  }
  QPointF n(-d.y(), d.x());
  const double L = 7, W = 3.2;
  arrow_ << tip << tip - d * L + n * W << tip - d * L - n * W;
  label_pos_ = tip - d * 14 + n * 7;
  bounds_ = path_.controlPointRect().united(arrow_.boundingRect()).adjusted(-10, -10, 10, 10);
}

void EdgeItem::set_hi(Hi h) {
  if (h == hi_) return;
  hi_ = h;
  update();
}

void EdgeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget*) {
  QColor c = mark::edge;
  double w = 1.1;
  if (hi_ == Hi::source) c = mark::sources, w = 2.2;
  if (hi_ == Hi::user) c = mark::users, w = 2.2;
  if (hi_ == Hi::dim) c.setAlpha(45);
  double lod = opt->levelOfDetailFromTransform(p->worldTransform());
  // A frame of 2,000 nodes laid out by the layered fallback shows ~1,100 long edges at once (a SINK's fan-in):
  // stroked and antialiased they took 35-40 ms of a 45 ms paint. An edge about a pixel wide takes Qt's cosmetic line
  // rasterizer instead of the path stroker (23 ms), and a crowded frame's edges skip antialiasing (8 ms): in such a
  // band of lines the difference does not show.
  p->setRenderHint(QPainter::Antialiasing, lod >= 0.35 && !crowded_);
  p->setOpacity(1.0);
  QPen pen(c, w);
  if (w * lod <= 1.5) {
    pen.setWidthF(std::max(1.0, w * lod));
    pen.setCosmetic(true);
  }
  if (dashed_) pen.setStyle(Qt::DashLine);
  p->setPen(pen);
  p->setBrush(Qt::NoBrush);
  p->drawPath(path_);
  p->setPen(Qt::NoPen);
  p->setBrush(c);
  p->drawPolygon(arrow_);
  if (show_port_ && lod > 0.5) {
    static QFont f = [] {
      QFont x = graph_font(false);
      x.setPointSizeF(7);
      return x;
    }();
    // port numbers repeat (0, 1, 2...): laid out once, not per edge and paint (drawText shaped ~1,000 of them per
    // paint of a 2,000-node frame)
    static QHash<int, QStaticText> ports;
    auto it = ports.find(port_);
    if (it == ports.end()) {
      QStaticText st(QString::number(port_));
      st.setTextFormat(Qt::PlainText);
      st.prepare(QTransform(), f);
      it = ports.insert(port_, st);
    }
    p->setFont(f);
    p->setPen(hi_ == Hi::dim ? c : QColor(0xc8, 0xcc, 0xe0));
    QSizeF sz = it->size();
    p->drawStaticText(QPointF(label_pos_.x() - sz.width() / 2, label_pos_.y() - sz.height() / 2), *it);
  }
}

}  // namespace tv
