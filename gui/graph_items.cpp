#include "gui/graph_items.h"

#include "gui/ansi_text.h"
#include "viz/reader/argfmt.h"

#include <QHash>
#include <QPaintEngine>
#include <QPainter>
#include <QStaticText>
#include <QStyleOptionGraphicsItem>
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include "gui/op_style.h"

namespace tv {

namespace {
constexpr double kOutline = 4;  // room outside the box for marks and highlights

// Laid-out label lines, shared by every node and frame: shaping text is most of what a frame's first paint costs
// (a 1,000-node frame showed 400 labels at once: 100-180 ms with drawText, a few ms from this cache). Labels repeat
// a lot ("dtypes.float", "ADD", folded consts), across nodes and from one frame to the next.
const QStaticText& static_text(const std::string& line, int style) {
  static QHash<QString, QStaticText> cache;
  // a kernel name in its ANSI colours (ansi_text.h) is rich text; the key says whether colours are on
  bool ansi = has_ansi(line);
  QString key = QString::fromStdString(line);
  key.prepend(QChar(ansi && kernel_colors() ? 'a' + style : '0' + style));
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
  if (ansi && kernel_colors()) {
    st.setText(ansi_html(line));
    st.setTextFormat(Qt::RichText);
  } else if (ansi) {
    st.setText(QString::fromStdString(tg::viz::strip_ansi(line)));
  }
  st.prepare(QTransform(), style == 0 ? font : style == 1 ? bold : struck);
  return *cache.insert(key, st);
}
}  // namespace

NodeItem::NodeItem(const GNode& n, int index, bool ghost) : n_(&n), index_(index), ghost_(ghost) {
  fill_ = op_color(n.op);
  text_ = fill_.lightnessF() < 0.5 ? QColor(0xf0, 0xf0, 0xf0) : QColor(0x14, 0x15, 0x1c);
  setZValue(ghost ? -1 : 1);
  setAcceptHoverEvents(false);
  // no pixmap per node: stepping draws every node of a new frame once, and allocating and filling ~2,000 pixmaps
  // on that first paint cost more than drawing them directly
  setCacheMode(QGraphicsItem::NoCache);
}

void NodeItem::rebind(const GNode& n, int index) {
  index_ = index;
  const GNode& o = *n_;
  if (&o == &n) return;
  bool resized = n.w != o.w || n.h != o.h;
  bool looks = resized || n.mark != o.mark || n.is_root != o.is_root || n.folded_from != o.folded_from ||
               n.op != o.op || n.lines != o.lines;
  if (resized) prepareGeometryChange();
  if (n.op != o.op) {
    fill_ = op_color(n.op);
    text_ = fill_.lightnessF() < 0.5 ? QColor(0xf0, 0xf0, 0xf0) : QColor(0x14, 0x15, 0x1c);
  }
  n_ = &n;
  if (looks) update();
}

QRectF NodeItem::boundingRect() const {
  return QRectF(-n_->w / 2 - kOutline, -n_->h / 2 - kOutline, n_->w + 2 * kOutline, n_->h + 2 * kOutline);
}

void NodeItem::set_hi(Hi h) {
  if (h == hi_) return;
  hi_ = h;
  update();
}

void NodeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget*) {
  QRectF r(-n_->w / 2, -n_->h / 2, n_->w, n_->h);
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
    if (n_->mark == Mark::added) pen = QPen(mark::added, 3);
    if (n_->mark == Mark::changed) pen = QPen(mark::changed, 3);
    p->setPen(pen);
    p->drawRoundedRect(r, 4, 4);
    if (n_->is_root) {  // the frame's root: a second thin line inside
      p->setPen(QPen(fill_.darker(220), 1));
      p->setBrush(Qt::NoBrush);
      p->drawRoundedRect(r.adjusted(2.5, 2.5, -2.5, -2.5), 3, 3);
    }
  }
  if (hi_ == Hi::selected || hi_ == Hi::source || hi_ == Hi::user || hi_ == Hi::differs) {
    QColor c = hi_ == Hi::selected ? QColor(Qt::white)
               : hi_ == Hi::source ? mark::sources
               : hi_ == Hi::user   ? mark::users
                                   : mark::differs;
    p->setPen(QPen(c, hi_ == Hi::selected ? 2.5 : hi_ == Hi::differs ? 3.5 : 2));
    p->setBrush(Qt::NoBrush);
    p->drawRoundedRect(r.adjusted(-3, -3, 3, 3), 6, 6);
  }
  if (lod < 0.35) return;  // too small to read: boxes only
  if (n_->addrspace && !ghost_) {  // the address space, as the reference's square in the top right corner
    QColor a = n_->addrspace == 'G'   ? QColor(0x75, 0xbd, 0x7b)
               : n_->addrspace == 'L' ? QColor(0xe7, 0xc8, 0x6a)
               : n_->addrspace == 'R' ? QColor(0xe6, 0x81, 0x81)
                                      : QColor(0xaa, 0xaa, 0xaa);
    p->setPen(Qt::NoPen);
    p->setBrush(a);
    p->drawRect(QRectF(r.right() - 13, r.top() + 3, 10, 10));
  }
  static const QFont font = graph_font(false), bold = graph_font(true);
  static const double lh = QFontMetricsF(font).height();
  double y = r.top() + kNodePadY;
  for (size_t i = 0; i < n_->lines.size(); i++) {
    QColor c = ghost_ ? QColor(0xe0, 0xa0, 0xa0) : text_;
    if (n_->folded_from >= 0 && (int)i >= n_->folded_from)
      c = text_.lightnessF() > 0.5 ? c.darker(130) : QColor(0x50, 0x58, 0x78);
    if (n_->facts_from >= 0 && (int)i >= n_->facts_from)  // compiler facts: quieter than the label
      c = text_.lightnessF() > 0.5 ? c.darker(145) : QColor(0x3a, 0x40, 0x5c);
    if ((int)i == n_->result_line) {  // the constant a match folded this node's source into
      QSizeF tsz = static_text(n_->lines[i], 0).size();
      p->setPen(Qt::NoPen);
      p->setBrush(mark::added);
      p->drawRoundedRect(QRectF(r.left() + (r.width() - tsz.width()) / 2 - 3, y, tsz.width() + 6, lh), 3, 3);
      c = QColor(0x10, 0x18, 0x10);
    }
    p->setPen(c);
    int style = i == 0 ? (ghost_ ? 2 : 1) : 0;
    p->setFont(style == 0 ? font : bold);  // the static text carries its own font; this keeps metrics consistent
    const QStaticText& st = static_text(n_->lines[i], style);
    QSizeF sz = st.size();
    p->drawStaticText(QPointF(r.left() + (r.width() - sz.width()) / 2, y + (lh - sz.height()) / 2), st);
    y += lh;
  }
}

EdgeItem::EdgeItem(const EdgePath& e, int port, bool show_port, bool crowded, bool dashed)
    : port_(port), show_port_(show_port), crowded_(crowded), dashed_(dashed) {
  setZValue(0);
  // paint gets the part of the view it is drawn into (opt->exposedRect): a long edge draws only its part there
  setFlag(QGraphicsItem::ItemUsesExtendedStyleOption);
  build(e);
}

void EdgeItem::set(const EdgePath& e, int port, bool show_port, bool crowded, bool dashed) {
  bool moved =
      e.bezier != bezier_ || e.pts.size() != pts_.size() ||
      !std::equal(e.pts.begin(), e.pts.end(), pts_.begin(), [](Pt a, Pt b) { return a.x == b.x && a.y == b.y; });
  bool looks = port != port_ || show_port != show_port_ || crowded != crowded_ || dashed != dashed_;
  port_ = port, show_port_ = show_port, crowded_ = crowded, dashed_ = dashed;
  if (moved) {
    prepareGeometryChange();  // repaints where it was and where it goes
    build(e);
  } else if (looks) {
    update();
  }
}

void EdgeItem::build(const EdgePath& e) {
  pts_ = e.pts;
  bezier_ = e.bezier;
  path_ = QPainterPath();
  arrow_.clear();
  label_pos_ = {};
  bounds_ = {};
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

namespace {
// the box of the points, with a zero-width or zero-height box still meeting what it touches (QRectF::intersects and
// ::contains ignore empty rectangles)
struct Span {
  double l, t, r, b;
  explicit Span(std::initializer_list<QPointF> ps) : l(1e300), t(1e300), r(-1e300), b(-1e300) {
    for (QPointF p : ps) l = std::min(l, p.x()), r = std::max(r, p.x()), t = std::min(t, p.y()), b = std::max(b, p.y());
  }
  bool meets(const QRectF& v) const { return l <= v.right() && r >= v.left() && t <= v.bottom() && b >= v.top(); }
  bool inside(const QRectF& v) const { return l >= v.left() && r <= v.right() && t >= v.top() && b <= v.bottom(); }
};

// Lines along the cubic a..d, within tol of it, leaving out the pieces whose box misses v (a cubic lies inside its
// control points' box). Halving is exact (de Casteljau) and does not depend on v, so a part of the view repainted
// later gets the very same lines. runs: one polyline per stretch that meets v.
void flatten_cubic(QPointF a, QPointF b, QPointF c, QPointF d, const QRectF& v, double tol, int depth,
                   std::vector<QPolygonF>& runs) {
  if (!Span{a, b, c, d}.meets(v)) return;
  QPointF ad = d - a;
  double len = std::hypot(ad.x(), ad.y());
  auto off = [&](QPointF q) {  // distance of a control point from the chord
    QPointF aq = q - a;
    return len > 1e-9 ? std::abs(aq.x() * ad.y() - aq.y() * ad.x()) / len : std::hypot(aq.x(), aq.y());
  };
  if (depth == 0 || std::max(off(b), off(c)) <= tol) {
    if (runs.empty() || runs.back().back() != a) runs.push_back(QPolygonF{a});
    runs.back().push_back(d);
    return;
  }
  QPointF ab = (a + b) / 2, bc = (b + c) / 2, cd = (c + d) / 2, abc = (ab + bc) / 2, bcd = (bc + cd) / 2,
          m = (abc + bcd) / 2;
  flatten_cubic(a, ab, abc, m, v, tol, depth - 1, runs);
  flatten_cubic(m, bcd, cd, d, v, tol, depth - 1, runs);
}
}  // namespace

void EdgeItem::visible_runs(const QRectF& v, double tol, std::vector<QPolygonF>& runs) const {
  runs.clear();
  const auto& pts = pts_;
  auto q = [&](size_t i) { return QPointF(pts[i].x, pts[i].y); };
  if (bezier_) {
    for (size_t i = 1; i + 2 < pts.size(); i += 3) flatten_cubic(q(i - 1), q(i), q(i + 1), q(i + 2), v, tol, 16, runs);
  } else {
    for (size_t i = 1; i < pts.size(); i++)
      if (Span{q(i - 1), q(i)}.meets(v)) {
        if (runs.empty() || runs.back().back() != q(i - 1)) runs.push_back(QPolygonF{q(i - 1)});
        runs.back().push_back(q(i));
      }
  }
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
  // The curve as lines a quarter of a pixel from it, only where it meets the part of the view being painted: Qt's
  // stroker split each curve of a fan-in to its full length in pixels (thousands of them across and beyond the view),
  // which was most of a frame's paint. A dashed edge is drawn whole, so its dashes stay where they are.
  if (dashed_) {
    p->drawPath(path_);
  } else if (!(lines_ && plain() && lines_->draws(p))) {
    double m = 2 + 3 / lod;  // the pen's width, and a margin
    static thread_local std::vector<QPolygonF> runs;
    visible_runs(opt->exposedRect.adjusted(-m, -m, m, m), 0.25 / lod, runs);
    for (const QPolygonF& r : runs) p->drawPolyline(r);
  }
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

EdgeLines::EdgeLines(const std::vector<EdgeItem*>* edges) : edges_(edges) {
  setZValue(-0.5);  // under the edges' arrowheads and highlighted edges, over the ghosts (as the edges were)
  setFlag(QGraphicsItem::ItemUsesExtendedStyleOption);
  setAcceptedMouseButtons(Qt::NoButton);
}

void EdgeLines::set_bounds(const QRectF& r) {
  if (r == bounds_) return;
  prepareGeometryChange();
  bounds_ = r;
}

bool EdgeLines::draws(const QPainter* p) const {
  if (!enabled || !p->paintEngine() || p->paintEngine()->type() != QPaintEngine::Raster) return false;
  const QTransform& t = p->worldTransform();
  // a one-pixel pen (EdgeItem::paint: 1.1 scaled, cosmetic from 1.5 px down, at least 1) on a plain scale
  return t.type() <= QTransform::TxScale && t.m11() > 0 && t.m22() > 0 && 1.1 * t.m11() <= 1.0 &&
         p->device()->devicePixelRatio() == 1.0;
}

namespace {
// One-pixel line from (x0, y0) to (x1, y1), in pixels of an image w x h: along its major axis, the pixels whose centre
// the line passes, on the row (column) the line is in there. Pixels outside the image are skipped, not visited.
inline void raster_line(uint32_t* bits, qsizetype stride, int w, int h, double x0, double y0, double x1, double y1,
                        uint32_t c, int& ylo, int& yhi) {
  double dx = x1 - x0, dy = y1 - y0;
  const int W = w, H = h;  // (w and h below: along the major axis, and across)
  auto put = [&](int x, int y) {
    if ((unsigned)x >= (unsigned)W || (unsigned)y >= (unsigned)H) return;
    bits[y * stride + x] = c;
    ylo = std::min(ylo, y), yhi = std::max(yhi, y);
  };
  bool xmajor = std::abs(dx) >= std::abs(dy);
  if (!xmajor) std::swap(x0, y0), std::swap(x1, y1), std::swap(dx, dy), std::swap(w, h);
  if (dx == 0) {
    xmajor ? put((int)std::floor(x0), (int)std::floor(y0)) : put((int)std::floor(y0), (int)std::floor(x0));
    return;
  }
  if (x0 > x1) std::swap(x0, x1), std::swap(y0, y1);
  double k = dy / dx;
  // (clamped as doubles first: a long edge's ends lie far outside)
  int a = (int)std::ceil(std::clamp(x0 - 0.5, -1.0, (double)w)),
      b = (int)std::ceil(std::clamp(x1 - 0.5, -1.0, (double)w)) - 1;
  a = std::max(a, 0), b = std::min(b, w - 1);
  for (int i = a; i <= b; i++) {
    int j = (int)std::floor(y0 + (i + 0.5 - x0) * k);
    xmajor ? put(i, j) : put(j, i);
  }
}
}  // namespace

void EdgeLines::paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget*) {
  if (!edges_ || !draws(p)) return;
  const QTransform t = p->worldTransform();
  QRect dev = t.mapRect(opt->exposedRect).toAlignedRect().adjusted(-1, -1, 1, 1) &
              QRect(0, 0, p->device()->width(), p->device()->height());
  if (dev.isEmpty()) return;
  static thread_local QImage img;  // reused: a whole view is 6 MB
  if (img.width() < dev.width() || img.height() < dev.height())
    img = QImage(std::max(img.width(), dev.width()), std::max(img.height(), dev.height()),
                 QImage::Format_ARGB32_Premultiplied);
  auto* bits = reinterpret_cast<uint32_t*>(img.bits());
  qsizetype stride = img.bytesPerLine() / 4;
  for (int y = 0; y < dev.height(); y++) std::memset(bits + y * stride, 0, dev.width() * 4);
  double lod = t.m11();
  double m = 2 + 3 / lod;
  QRectF v = opt->exposedRect.adjusted(-m, -m, m, m);
  uint32_t c = QColor(mark::edge).rgba();  // opaque: premultiplied as it is
  double sx = t.m11(), sy = t.m22(), ox = t.dx() - dev.left(), oy = t.dy() - dev.top();
  int ylo = INT_MAX, yhi = -1;
  static thread_local std::vector<QPolygonF> runs;
  for (const EdgeItem* e : *edges_) {
    if (!e->plain() || !e->bounds_.intersects(v)) continue;
    e->visible_runs(v, 0.25 / lod, runs);
    for (const QPolygonF& r : runs)
      for (qsizetype i = 1; i < r.size(); i++)
        raster_line(bits, stride, dev.width(), dev.height(), r[i - 1].x() * sx + ox, r[i - 1].y() * sy + oy,
                    r[i].x() * sx + ox, r[i].y() * sy + oy, c, ylo, yhi);
  }
  if (yhi < ylo) return;
  p->save();
  p->resetTransform();
  p->setOpacity(1.0);
  p->drawImage(QPoint(dev.left(), dev.top() + ylo), img, QRect(0, ylo, dev.width(), yhi - ylo + 1));
  p->restore();
}

}  // namespace tv
